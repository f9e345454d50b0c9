"""Every shell command of the README and the docs runs as written.

:func:`~tests.docs.shell_commands.documented_commands` reads them out of the
pages' ``sh``, ``bash`` and ``console`` blocks; :data:`CHECKS` says how each
one is checked, and a command with no entry (or an entry no page uses) fails
:func:`test_every_documented_command_has_a_check`. The ways:

* :class:`Runs`: run by ``bash`` in a scratch folder holding a link to
  ``examples/``, with ``$LLAMA_SERVER_URL`` pointing at a scripted chat server
  (:func:`~tests.docs.schema_server.fitting_responder`); it must exit 0.
* :class:`Serves`: a server command is started, must answer a GET with 200
  and the expected text, and is stopped with Ctrl-C. Its port is a free one
  (``add`` appends the option, or ``replace`` swaps the documented port).
* :class:`Installs`: ``pip install`` reaches PyPI, so it is checked offline:
  every extra it names exists and what it installs is installed here (the
  test environment has every extra).
* :class:`RanByCi`: ``.ci/run`` runs it as written.
* :class:`Excluded`: cannot run here, and says why. Kept short.

``replace`` pairs are the only changes made to a command: each stands a
local stand-in for something of the user's (``{server}``: the scripted
server's URL, ``{port}``: a free port, ``{model}``: the default local model
file, ``{served}``: the URL of ``agent-smith serve --local``, ``{tmp}``: a
scratch folder). Commands that need the real local model
are marked ``llama`` and ``slow``, like the other tests that start it.
"""

from __future__ import annotations

import configparser
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
import requests
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.docs.markdown_blocks import ROOT
from tests.docs.schema_server import fitting_responder
from tests.docs.shell_commands import Command, documented_commands
from tests.support.llm_server import ScriptedLlmServer
from tests.support.pipes import MODEL_TIMEOUT
from tests.support.ports import free_port
from tests.support.served import serving
from tests.support.signals import default_sigint

#: Seconds a command may take, or a server to answer (the docs site builds in ~30 s here).
TIMEOUT = 180.0
Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Scratch:
    """Where a command runs: its folder, environment, and the stand-ins ``replace`` names."""

    folder: Path
    env: dict[str, str]
    server: str
    model: Callable[[], str]  # the default local model's file, fetched when first asked
    served: Callable[[], str]  # the URL of `agent-smith serve --local`, started when first asked

    def fill(self, command: str, replace: Pairs) -> str:
        for documented, local in replace:
            assert documented in command, f"{documented!r} is not in {command!r}"
            command = command.replace(documented, local)
        command = command.replace("{server}", self.server).replace("{tmp}", str(self.folder))
        if "{model}" in command:
            command = command.replace("{model}", shlex.quote(self.model()))
        if "{served}" in command:
            command = command.replace("{served}", self.served())
        return command


@dataclass(frozen=True)
class Runs:
    """Exits 0 with ``expect`` in its output (``before`` runs first, ``after`` next)."""

    expect: str = ""
    stdin: str = ""
    replace: Pairs = ()
    before: str = ""
    after: str = ""
    in_checkout: bool = False  # run at the top of the checkout, not in the scratch folder
    llama: bool = False

    def check(self, command: str, scratch: Scratch) -> None:
        steps = [scratch.fill(self.before, ()), scratch.fill(command, self.replace)]
        steps.append(scratch.fill(self.after, ()))
        line = " && ".join(filter(None, steps))
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=ROOT if self.in_checkout else scratch.folder,
            env=scratch.env,
            input=self.stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=MODEL_TIMEOUT if self.llama else TIMEOUT,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{line}: status {done.returncode}\n{output}"
        assert "Traceback" not in output, output
        assert self.expect in output, output


@dataclass(frozen=True)
class Serves:
    """Answers GET ``path`` with 200 and ``expect`` in the body, then stops on Ctrl-C."""

    path: str
    expect: str
    add: str = ""
    replace: Pairs = ()
    env: Pairs = ()
    in_checkout: bool = False
    llama: bool = False

    def check(self, command: str, scratch: Scratch) -> None:
        port = str(free_port())
        line = f"{scratch.fill(command, self.replace)} {self.add}".strip().replace("{port}", port)
        log = scratch.folder / "server.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                ["bash", "-c", line],
                cwd=ROOT if self.in_checkout else scratch.folder,
                env={**scratch.env, **dict(self.env)},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: Ctrl-C reaches all of it
                preexec_fn=default_sigint,  # Ctrl-C works even if this run is a background job
            )
        try:
            body = _answer(proc, f"http://127.0.0.1:{port}{self.path}", self.expect, self.llama)
            assert body is not None, f"{line}: never answered\n{log.read_text(errors='replace')}"
        finally:
            stopped = _stop(proc)
        assert stopped, f"{line}: did not stop on Ctrl-C\n{log.read_text(errors='replace')}"


@dataclass(frozen=True)
class Installs:
    """``pip install``: the extras it names exist, and what they need is installed here."""

    def check(self, command: str, scratch: Scratch) -> None:
        words = shlex.split(command)
        assert words[:2] == ["pip", "install"], command
        target = words[-1]
        setup = configparser.ConfigParser()  # setup.cfg's own reading: %(test)s expands
        setup.read(ROOT / "setup.cfg", encoding="utf-8")
        wanted: list[str] = [target]
        if target.startswith("."):  # this checkout, with extras
            extras = target.partition("[")[2].rstrip("]")
            declared = {
                canonicalize_name(name): _requirements(value)
                for name, value in setup["options.extras_require"].items()
            }
            names = [canonicalize_name(name) for name in extras.split(",") if name]
            unknown = [name for name in names if name not in declared]
            assert not unknown, f"{command}: no such extra {unknown}"
            wanted = [*_requirements(setup["options"]["install_requires"]), "agent-smith"]
            wanted += [r for name in names for r in declared[name]]
        for requirement in map(Requirement, wanted):
            try:
                installed = version(requirement.name)
            except PackageNotFoundError:
                pytest.fail(
                    f"{command}: {requirement.name} is not installed in the test environment"
                )
            assert requirement.specifier.contains(installed, prereleases=True), (
                requirement,
                installed,
            )


def _requirements(value: str) -> list[str]:
    """The requirements of a setup.cfg value, one a line."""
    return [line.strip() for line in value.splitlines() if line.strip()]


@dataclass(frozen=True)
class RanByCi:
    """``.ci/run`` runs this very command (so every CI run checks it)."""

    def check(self, command: str, scratch: Scratch) -> None:
        steps = [
            line.split("#")[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
        ]
        assert command.split()[0] in steps, f".ci/run does not run {command}"


@dataclass(frozen=True)
class Excluded:
    """Not run: ``reason`` says why."""

    reason: str


Runnable = Runs | Serves | Installs | RanByCi
Check = Runnable | Excluded

_DJANGO_DB = "export DATABASE_URL=sqlite:///{tmp}/agentsite.db"  # a server-less stand-in
_GUNICORN_BIND = "--bind 127.0.0.1:{port} --no-control-socket"  # gunicorn>=27: no ~/.gunicorn
_REPL_UP = "/exit or Ctrl-D quits"  # the REPL's banner: it started and read /exit
_NOTEBOOK = Serves(  # the notebook's folder is the server's root
    "/api/contents/notebook.ipynb?token=docs-test",
    '"name": "notebook.ipynb"',
    add="--no-browser --port={port}",
    env=(("JUPYTER_TOKEN", "docs-test"),),
)
_USERS_MODEL = "~/models/"  # a GGUF of the user's; the default local model stands in for it
_NOT_ON_PYPI = "a server of its own project, not on PyPI: agent-smith serve runs the same llama.cpp"

CHECKS: dict[str, Check] = {
    # Installing and the quickstart
    "python3 -m venv .venv": Runs(after="test -x .venv/bin/python"),
    ". .venv/bin/activate": Runs(
        before="python3 -m venv --without-pip .venv",
        after="command -v python",
        expect=".venv/bin/python",
    ),
    "pip install -e .": Installs(),
    "pip install -e '.[demo]'": Installs(),
    "pip install -e '.[local]'": Installs(),
    "pip install -e '.[otel]'": Installs(),
    "pip install -e '.[oauth-jwt]'": Installs(),
    "pip install -e '.[dask]'": Installs(),
    "pip install -e '.[web]'": Installs(),
    "pip install -e '.[postgres]'": Installs(),
    "pip install -e '.[django]'": Installs(),
    "pip install -e '.[notebook]'": Installs(),
    "pip install -e '.[bedrock]'": Installs(),
    "pip install -e '.[durable]'": Installs(),
    "pip install -e '.[evals]'": Installs(),
    "pip install -e '.[docs]'": Installs(),
    "pip install -e '.[dev,local]'": Installs(),
    "pip install -e '.[local,otel]'": Installs(),
    "pip install flask": Installs(),
    "pip install opentelemetry-sdk": Installs(),
    "scripts/test.sh": RanByCi(),
    "scripts/test.sh tests/llm -q": RanByCi(),  # the same script; its arguments go to pytest
    # The docs site
    "mkdocs serve": Serves("/", "agent_smith", add="--dev-addr 127.0.0.1:{port}", in_checkout=True),
    "mkdocs build --strict -d /tmp/agent-smith-site": Runs(
        replace=(("/tmp/agent-smith-site", "{tmp}/site"),),
        after="test -f {tmp}/site/index.html",
        in_checkout=True,
    ),
    # The demo CLI against a server
    "agent-smith": Runs(stdin="/exit\n", expect=_REPL_UP),
    "agent-smith -e http://127.0.0.1:8080": Runs(
        replace=(("http://127.0.0.1:8080", "{server}"),), stdin="/exit\n", expect=_REPL_UP
    ),
    "agent-smith -e http://localhost:11434/v1 -m qwen2.5:7b": Runs(  # Ollama's OpenAI API
        replace=(("http://localhost:11434", "{server}"),), stdin="/exit\n", expect=_REPL_UP
    ),
    "agent-smith -e http://localhost:8000/v1 -m Qwen/Qwen2.5-7B-Instruct": Runs(  # vLLM's
        replace=(("http://localhost:8000", "{server}"),), stdin="/exit\n", expect=_REPL_UP
    ),
    "agent-smith --skill examples/skills/time-keeper": Runs(
        stdin="/exit\n", expect="; skill time-keeper (MCP: example). "
    ),
    "agent-smith --skill examples/skills/release-notes": Runs(
        stdin="/exit\n", expect="; skill release-notes. "
    ),
    # The demo CLI on the local model
    "agent-smith --local": Runs(stdin="/exit\n", expect=_REPL_UP, llama=True),
    "agent-smith --local --no-default-mcp": Runs(stdin="/exit\n", expect=_REPL_UP, llama=True),
    "agent-smith --local smollm2": Runs(  # a 98 MB download: checked up to fetching it
        replace=(("--local smollm2", "--local smollm2 --help"),), expect="--local [MODEL]"
    ),
    "agent-smith --serve-model ~/models/qwen2.5-3b-instruct-q4_k_m.gguf": Runs(
        replace=((_USERS_MODEL + "qwen2.5-3b-instruct-q4_k_m.gguf", "{model}"),),
        stdin="/exit\n",
        expect=_REPL_UP,
        llama=True,
    ),
    "agent-smith --serve-model ~/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf": Runs(
        replace=((_USERS_MODEL + "Qwen2.5-7B-Instruct-Q4_K_M.gguf", "{model}"),),
        stdin="/exit\n",
        expect=_REPL_UP,
        llama=True,
    ),
    "agent-smith serve --local": Serves("/health", "ok", add="--port {port}", llama=True),
    "curl --compressed http://127.0.0.1:8080/": Runs(
        replace=(("http://127.0.0.1:8080", "{served}"),), expect="<!doctype html>", llama=True
    ),
    "curl http://127.0.0.1:8080/health": Runs(
        replace=(("http://127.0.0.1:8080", "{served}"),), expect='{"status":"ok"}', llama=True
    ),
    "agent-smith web --local": Serves("/", "agent_smith dev UI", add="--port {port}", llama=True),
    # The examples
    "python examples/quickstart.py": Runs(expect="Sunny and 21 °C in Paris."),
    "python examples/batch/run_batch.py": Runs(
        expect="0 skipped (already in results.jsonl), 6 run"
    ),
    "python examples/batch/run_batch.py results.jsonl": Runs(
        expect="0 skipped (already in results.jsonl), 6 run"
    ),
    "agent-smith eval examples/evals/arithmetic.jsonl --spec examples/batch/spec.json --repeat 3 "
    "--html report.html --json report.json": Runs(
        replace=(("--repeat 3", "--repeat 3 -e {server}"),),
        after="test -s report.html && test -s report.json",
        expect="calculator: 5 cases x 3 = 15 runs",
    ),
    "python examples/evals/eval_demo_agent.py": Runs(expect="report written to eval_report.html"),
    "flask --app examples/flask_app.py run": Serves("/", '<form id="ask">', add="--port {port}"),
    "flask --app examples/web/flask_mount.py run": Serves("/", "Log in", add="--port {port}"),
    "export DATABASE_URL=postgresql://USER@127.0.0.1/agentsite": Runs(),
    "python examples/django_project/manage.py migrate": Runs(before=_DJANGO_DB),
    "DJANGO_SUPERUSER_PASSWORD=change-me python examples/django_project/manage.py "
    "createsuperuser --noinput --username ada --email ada@example.org": Runs(
        before=f"{_DJANGO_DB} && python examples/django_project/manage.py migrate"
    ),
    "gunicorn --chdir examples/django_project --workers 4 --worker-class gthread --threads 8 "
    "agentsite.wsgi": Serves(
        "/login/", "Log in", add="--bind 127.0.0.1:{port} --no-control-socket"
    ),
    "jupyter notebook examples/notebook.ipynb": _NOTEBOOK,
    "jupyter lab examples/notebook.ipynb": _NOTEBOOK,
    "jupyter execute examples/notebook.ipynb": Runs(),
    # Other projects' servers
    "llama-server --jinja -m qwen2.5-3b-instruct-q4_k_m.gguf --port 8080": Excluded(_NOT_ON_PYPI),
    "llama-server -m MODEL.gguf --jinja --host 127.0.0.1 --port 8080 -c 16384": Excluded(
        _NOT_ON_PYPI
    ),
    "ollama pull qwen2.5:7b": Excluded("Ollama is not on PyPI, and pulling a model needs its hub"),
    "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes": (
        Excluded("vLLM needs a GPU and a 15 GB model from its hub")
    ),
}

DOCUMENTED = documented_commands()


def test_every_documented_command_has_a_check() -> None:
    documented = {command.text for command in DOCUMENTED}
    unchecked = [c.places for c in DOCUMENTED if c.text not in CHECKS]
    assert documented - CHECKS.keys() == set(), f"add these to CHECKS: {unchecked}"
    assert CHECKS.keys() - documented == set(), "no page shows these any more"


def test_the_commands_not_run_are_few_and_say_why() -> None:
    excluded = [check for check in CHECKS.values() if isinstance(check, Excluded)]
    assert all(check.reason.strip() for check in excluded)
    assert len(excluded) <= 4  # rewrite a command a test cannot run until it can


def _stop(proc: subprocess.Popen[bytes]) -> bool:
    """Ctrl-C to the command's process group, twice if need be (Jupyter asks first);
    whether that stopped it (if not, it is killed)."""
    for patience in (3, 60):
        with contextlib.suppress(ProcessLookupError):  # it ended by itself
            os.killpg(proc.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(patience)
            return True
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return False


def _answer(proc: subprocess.Popen[bytes], url: str, expect: str, llama: bool) -> str | None:
    """The body of ``url`` once it answers 200 with ``expect`` in it; None if it never does."""
    waited = threading.Event()  # never set: waits between attempts that can be interrupted
    deadline = time.monotonic() + (MODEL_TIMEOUT if llama else TIMEOUT)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return None
        try:
            answer = requests.get(url, timeout=10)
        except (requests.ConnectionError, requests.Timeout):  # not up yet, or slow under load
            answer = None
        if answer is not None and answer.status_code == 200 and expect in answer.text:
            return answer.text
        waited.wait(0.5)
    return None


def _params() -> list[object]:
    params: list[object] = []
    for command in DOCUMENTED:
        check = CHECKS.get(command.text)
        if check is None or isinstance(check, Excluded):
            continue
        llama = isinstance(check, (Runs, Serves)) and check.llama
        marks = [pytest.mark.slow, pytest.mark.llama] if llama else []
        params.append(pytest.param(command, check, id=command.text, marks=marks))
    return params


@pytest.fixture(scope="module")
def scripted_server() -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer(fitting_responder) as server:
        yield server


@pytest.fixture(scope="module")
def served_local() -> Iterator[Callable[[], str]]:
    """``agent-smith serve --local`` on a free port, started when first asked for."""
    with serving() as start:
        started: list[str] = []

        def url() -> str:
            if not started:
                started.append(start("--local", "--port", "0").wait_ready())
            return started[0]

        yield url


def _jupyter_config(folder: Path) -> Path:
    """A Jupyter config folder that lets the server run as root (as CI does; users are not)."""
    folder.mkdir()
    if os.geteuid() == 0:
        config = {"ServerApp": {"allow_root": True}}
        (folder / "jupyter_server_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _default_model() -> str:
    from tests.integration.conftest import require_local_llama

    return str(require_local_llama())


@pytest.mark.parametrize(("command", "check"), _params())
def test_the_documented_command_works(
    command: Command,
    check: Runnable,
    tmp_path: Path,
    scripted_server: ScriptedLlmServer,
    served_local: Callable[[], str],
) -> None:
    if isinstance(check, (Runs, Serves)) and check.llama:
        _default_model()  # skips (or fails under AGENT_SMITH_REQUIRE_ALL) without the model
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMA_API_KEY", "PYTEST_ADDOPTS")}
    env.update(
        LLAMA_SERVER_URL=scripted_server.url,
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        PYTHONUNBUFFERED="1",
        XDG_DATA_HOME=str(tmp_path / "data"),  # agent-smith web's conversations
        JUPYTER_RUNTIME_DIR=str(tmp_path / "jupyter"),
        JUPYTER_CONFIG_DIR=str(_jupyter_config(tmp_path / "jupyter-config")),
    )
    scratch = Scratch(folder, env, scripted_server.url, _default_model, served_local)
    check.check(command.text, scratch)
