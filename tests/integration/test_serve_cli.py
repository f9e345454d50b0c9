"""``agent-smith serve`` as a real process on the test model: slots, the reply cap, Ctrl-C."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest
import requests

from tests.integration.conftest import require_local_llama
from tests.support.pipes import MODEL_TIMEOUT, TIMEOUT
from tests.support.served import Served

pytestmark = [pytest.mark.slow, pytest.mark.llama]

#: A question the model answers at length: a reply the cap must cut.
LONG = {
    "messages": [{"role": "user", "content": "Count from 1 to 200, separated by commas."}],
    "temperature": 0,
}


def _port_is_free(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def test_serve_answers_with_its_slots_and_cap_until_ctrl_c(serve: Callable[..., Served]) -> None:
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


def test_serve_on_a_taken_port_says_so_in_one_line(serve: Callable[..., Served]) -> None:
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
