"""``agent-smith serve`` as a real process on the test model: slots, the reply cap, Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.integration.conftest import require_local_llama
from tests.support.pipes import MODEL_TIMEOUT, TIMEOUT, PipeReader
from tests.support.signals import default_sigint

pytestmark = [pytest.mark.slow, pytest.mark.llama]

REPO = Path(__file__).resolve().parents[2]
SERVING = re.compile(r"^serving (\S+) at (http://127\.0\.0\.1:\d+) ", re.M)


class Served:
    """An ``agent-smith serve`` child, its output, and the address it printed."""

    def __init__(self, *args: str) -> None:
        env = {
            k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER_URL", "LLAMA_API_KEY")
        }
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_smith", "serve", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # a job of its own, as in a terminal
            preexec_fn=default_sigint,  # Ctrl-C reaches it also from a background job
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.out = PipeReader(self.proc.stdout, "serve-out")
        self.err = PipeReader(self.proc.stderr, "serve-err")
        self.url = ""

    def wait_ready(self) -> str:
        found = SERVING.search(self.out.wait_for(" Ctrl-C stops.\n", timeout=MODEL_TIMEOUT))
        assert found, self.err.text()
        self.url = found.group(2)
        return self.url

    def ctrl_c(self) -> int:
        os.killpg(self.proc.pid, signal.SIGINT)  # the terminal's Ctrl-C, to the whole job
        return self.proc.wait(TIMEOUT)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(TIMEOUT)
        for stream in (self.proc.stdout, self.proc.stderr):
            assert stream is not None
            stream.close()


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Served] = []

    def start(*args: str) -> Served:
        started.append(Served(*args))
        return started[-1]

    yield start
    for served in started:
        served.close()


#: A question the model answers at length: a reply the cap must cut.
LONG = {
    "messages": [{"role": "user", "content": "Count from 1 to 200, separated by commas."}],
    "temperature": 0,
}


def _port_is_free(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def test_serve_answers_with_its_slots_and_cap_until_ctrl_c(serve: Any) -> None:
    model = require_local_llama()
    served = serve(
        "--serve-model", str(model), "--port", "0", "--parallel", "2", "--ctx-size", "2048",
        "--max-tokens", "16", "--threads", "1",
    )  # fmt: skip
    url = served.wait_ready()
    slots = requests.get(f"{url}/slots", timeout=TIMEOUT).json()
    assert [slot["n_ctx"] for slot in slots] == [2048, 2048]  # a context of its own each
    capped = requests.post(f"{url}/v1/chat/completions", json=LONG, timeout=MODEL_TIMEOUT)
    assert capped.json()["choices"][0]["finish_reason"] == "length"
    assert capped.json()["usage"]["completion_tokens"] == 16  # no max_tokens sent: the cap
    asked = requests.post(
        f"{url}/v1/chat/completions", json={**LONG, "max_tokens": 24}, timeout=MODEL_TIMEOUT
    )
    assert asked.json()["usage"]["completion_tokens"] == 24  # a request's own wins
    assert served.ctrl_c() == 0
    assert "agent-smith serve: stopped" in served.err.text()
    assert "Traceback" not in served.err.text()
    assert _port_is_free(url)  # llama.cpp's process went with it


def test_serve_on_a_taken_port_says_so_in_one_line(serve: Any) -> None:
    model = require_local_llama()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        served = serve("--serve-model", str(model), "--port", str(port))
        assert served.proc.wait(MODEL_TIMEOUT) == 1
    err = served.err.text()
    assert err.splitlines()[-1].startswith("agent-smith serve: error: llama.cpp server on ")
    assert f"couldn't bind 127.0.0.1:{port}" in err and "Traceback" not in err
