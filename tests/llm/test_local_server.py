"""LocalLlamaServer's own logic, with stand-in child processes (no xllamacpp needed).

The stand-ins are real subprocesses speaking the child's protocol (config line
on stdin, handshake line on stdout, exit at stdin EOF), so start-up bounds,
health waiting and cleanup are exercised for real. The real llama.cpp child
is tested in tests/integration/test_llama_server.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import requests

from agent_smith import AgentTimeoutError, ConfigError, TransportError
from agent_smith.llm import local_server
from agent_smith.llm.llama_log import error_lines
from agent_smith.llm.local_server import INSTALL_HINT, LocalLlamaServer

pytestmark = pytest.mark.usefixtures("no_thread_leak")

# A stand-in llama.cpp child: a real HTTP server whose /health answers 503
# ("Loading model", as llama-server does) a few times before 200.
FAKE_SERVER = r"""
import http.server, json, sys, threading
config = json.loads(sys.stdin.readline())
state = {"loading": config["options"].get("loading", 0)}
class Health(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if state["loading"] > 0:
            state["loading"] -= 1
            body, status = b'{"error":{"code":503,"message":"Loading model"}}', 503
        else:
            body, status = b'{"status":"ok"}', 200
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
server = http.server.HTTPServer(("127.0.0.1", 0), Health)
threading.Thread(target=server.serve_forever, daemon=True).start()
print("llama.cpp chatter on stdout is ignored", flush=True)
address = "http://127.0.0.1:%d" % server.server_port
print("AGENT_SMITH_LLAMA " + json.dumps({"address": address}), flush=True)
sys.stdin.read()
"""


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


@pytest.fixture
def child(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Pretend xllamacpp is installed; each test sets the child program."""
    monkeypatch.setattr(local_server, "xllamacpp_available", lambda: True)
    return monkeypatch


def use_child(monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    monkeypatch.setattr(local_server, "_CHILD_ARGV", ("-c", source))


def test_without_xllamacpp_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, model: Path
) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # find_spec now reports it missing
    with pytest.raises(ConfigError) as caught:
        LocalLlamaServer(model)
    message = str(caught.value)
    assert INSTALL_HINT in message and "\n" not in message
    assert INSTALL_HINT.startswith("pip install -e '.[local]'")


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"port": 70000}, "port"),
        ({"ctx_size": 0}, "positive"),
        ({"threads": 0}, "positive"),
        ({"start_timeout": 0}, "positive"),
    ],
)
def test_bad_options_are_config_errors(
    child: pytest.MonkeyPatch, model: Path, options: dict[str, int], match: str
) -> None:
    with pytest.raises(ConfigError, match=match):
        LocalLlamaServer(model, **options)  # type: ignore[arg-type]


def test_a_missing_model_file_is_a_config_error(child: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such model file"):
        LocalLlamaServer(tmp_path / "absent.gguf")


def test_a_missing_projector_file_is_a_config_error(
    child: pytest.MonkeyPatch, model: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="no such multimodal projector file"):
        LocalLlamaServer(model, mmproj=tmp_path / "absent-mmproj.gguf")


def test_endpoint_before_start_is_a_config_error(child: pytest.MonkeyPatch, model: Path) -> None:
    with pytest.raises(ConfigError, match="not running"):
        _ = LocalLlamaServer(model).endpoint


def test_waits_through_503_loading_then_serves_and_stops(
    child: pytest.MonkeyPatch, model: Path
) -> None:
    use_child(child, FAKE_SERVER)
    server = LocalLlamaServer(model, options={"loading": 3})
    with server:
        assert requests.get(f"{server.endpoint}/health", timeout=10).status_code == 200
        process = server._process
        assert process is not None and process.poll() is None
        endpoint = server.endpoint
    assert process.returncode == 0  # left by itself when its stdin closed
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{endpoint}/health", timeout=10)
    server.close()  # idempotent


def test_a_child_that_never_gets_ready_is_bounded_and_killed(
    child: pytest.MonkeyPatch, model: Path
) -> None:
    # Ignores its stdin closing, like a server stuck loading: only a kill ends it.
    use_child(child, "import sys, time\nsys.stdin.readline()\ntime.sleep(600)")
    server = LocalLlamaServer(model, start_timeout=1.0, stop_timeout=0.5)
    with pytest.raises(AgentTimeoutError, match="not ready within 1 s") as caught:
        server.start()
    assert caught.value.budget == 1.0
    assert server._process is None


def test_a_child_that_dies_is_reported_with_its_error_line(
    child: pytest.MonkeyPatch, model: Path
) -> None:
    use_child(
        child,
        "import sys\n"
        "sys.stderr.write('0.00.001.000 I srv init: loading model\\n')\n"
        "sys.stderr.write('0.00.002.000 E gguf_init_from_file: failed to read magic\\n')\n"
        "sys.exit(1)\n",
    )
    with pytest.raises(
        TransportError, match="failed to start: gguf_init_from_file: failed"
    ) as caught:
        LocalLlamaServer(model).start()
    assert caught.value.operation == "start llama.cpp server"
    assert "\n" not in str(caught.value)


def test_a_child_reporting_an_error_is_a_transport_error(
    child: pytest.MonkeyPatch, model: Path
) -> None:
    use_child(
        child,
        "import json, sys\nsys.stdin.readline()\n"
        'print("AGENT_SMITH_LLAMA " + json.dumps({"error": "RuntimeError: no"}), flush=True)\n',
    )
    with pytest.raises(TransportError, match="RuntimeError: no"):
        LocalLlamaServer(model).start()


def test_the_config_reaches_the_child_on_stdin_not_argv(
    child: pytest.MonkeyPatch, model: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    use_child(
        child,
        "import json, sys\nline = sys.stdin.readline()\n"
        f"open({str(seen)!r}, 'w').write(json.dumps({{'line': line, 'argv': sys.argv}}))\n"
        'print("AGENT_SMITH_LLAMA " + json.dumps({"error": "stop here"}), flush=True)\n',
    )
    with pytest.raises(TransportError):
        LocalLlamaServer(model, api_key="sekret", ctx_size=1024, threads=3, mmproj=model).start()
    record = json.loads(seen.read_text())
    config = json.loads(record["line"])
    assert config["api_key"] == "sekret" and "sekret" not in " ".join(record["argv"])
    assert (config["ctx_size"], config["threads"], config["port"]) == (1024, 3, 0)
    assert config["options"] == {"mmproj.path": str(model)}  # the projector, as llama.cpp's field


def test_error_lines_prefer_llama_cpp_errors() -> None:
    lines = [
        "0.00.003.425 I srv          init: initializing ...",
        "0.01.436.081 E srv         start: couldn't bind HTTP server socket, port: 8080",
        "0.01.436.201 E srv          init: exiting due to HTTP server error",
        "0.01.500.000 I srv          done",
    ]
    assert error_lines(lines) == (
        "srv start: couldn't bind HTTP server socket, port: 8080 | "
        "srv init: exiting due to HTTP server error"
    )
    assert error_lines(["Traceback: boom"]) == "Traceback: boom"
    assert error_lines([]) == ""
