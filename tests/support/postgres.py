"""A private PostgreSQL server on loopback for the tests, from Debian's packages.

``.ci/run`` (through ``scripts/test.sh``) installs Debian's ``postgresql``;
the tests start one throw-away cluster per pytest session with ``initdb`` and
``pg_ctl`` in a temporary directory, listening on 127.0.0.1 at a free port,
and stop it at the end. PostgreSQL refuses to run as root: under root the
cluster belongs to the ``postgres`` user the package creates and every
command runs through ``runuser``. Each test gets its own database
(:meth:`PostgresServer.new_database`), so tests never see each other's rows.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port

#: The cluster's superuser; it logs in over loopback with no password (trust).
USER = "agent_smith"


def _bin_dir() -> Path | None:
    """Where Debian keeps the server programs (not on PATH): the newest version's bin."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def _version_key(path: str) -> int:
    version = Path(path).parent.parent.name
    return int(version) if version.isdigit() else 0


class PostgresServer:
    """One PostgreSQL cluster in a temporary directory, started and stopped by the tests."""

    def __init__(self, bin_dir: Path, *, fsync: bool = False) -> None:
        self._bin = bin_dir
        self._fsync = "on" if fsync else "off"  # tests need no fsync; benchmarks measure it
        self._root = Path(tempfile.mkdtemp(prefix="agent_smith-pg-"))
        self.data_dir = self._root / "data"
        self.port = free_port()
        self._run_as = "postgres" if os.geteuid() == 0 else None
        if self._run_as:
            shutil.chown(self._root, user=self._run_as)
            self._root.chmod(0o700)

    def _command(self, program: str, *args: str) -> None:
        argv = [str(self._bin / program), *args]
        if self._run_as:
            argv = ["runuser", "-u", self._run_as, "--", *argv]
        # pg_ctl -w waits up to PGCTLTIMEOUT (60 s by default) for the server.
        subprocess.run(argv, check=True, capture_output=True, timeout=180)

    def start(self) -> None:
        """Create the cluster (first time only) and start the server; returns when it accepts."""
        if not self.data_dir.exists():
            data = str(self.data_dir)
            self._command("initdb", "-D", data, "-U", USER, "-A", "trust", "-E", "UTF8")
        options = f"-p {self.port} -k {self._root} -c listen_addresses=127.0.0.1"
        options += f" -c fsync={self._fsync}"
        log = str(self._root / "server.log")
        self._command("pg_ctl", "-D", str(self.data_dir), "-l", log, "-o", options, "-w", "start")

    def stop(self) -> None:
        """Stop the server at once (open connections are cut), keeping the cluster's files."""
        self._command("pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        """Stop and start again on the same port: what a test of "the server went away" needs."""
        self.stop()
        self.start()

    def url(self, database: str = "postgres") -> str:
        """A libpq connection URL for ``database`` on this server."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database with a fresh name; its URL."""
        name = f"t_{uuid.uuid4().hex[:16]}"
        psql = shutil.which("psql") or str(self._bin / "psql")
        subprocess.run(
            [psql, self.url(), "-q", "-v", "ON_ERROR_STOP=1", "-c", f"CREATE DATABASE {name}"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        return self.url(name)

    def close(self) -> None:
        """Stop the server if it runs and delete its files."""
        with contextlib.suppress(subprocess.CalledProcessError):  # not running: nothing to stop
            self.stop()
        shutil.rmtree(self._root, ignore_errors=True)


@contextlib.contextmanager
def running_server(*, fsync: bool = False) -> Iterator[PostgresServer | None]:
    """A started server, deleted at the end; None without Debian's postgresql (the
    benchmarks in scripts/ use it too)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        yield None
        return
    server = PostgresServer(bin_dir, fsync=fsync)
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (skips, saying why, without Debian's postgresql)."""
    with running_server() as server:
        if server is None:
            pytest.skip("PostgreSQL tests need Debian's postgresql (apt-get install postgresql)")
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a fresh, empty database on the session's server."""
    return postgres_server.new_database()
