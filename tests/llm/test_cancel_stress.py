"""``LlmClient.cancel()`` from another thread at random moments never breaks a later request.

A cancel that lands while a finished request's connection goes back to the
pool must not shut that socket down under the next request that takes it
(transport.py's LiveCall and the pool's release hook in _internal/sockets.py).
Real HTTP on 127.0.0.1 with kept-alive connections shared by two requesting
threads; the interpreter switches threads far more often than by default, so
the moments a cancel lands on are many. A cancelled request may only end in
CancelledError; every other one answers.
"""

from __future__ import annotations

import random
import sys
import threading
from collections import Counter
from collections.abc import Iterator

import pytest

from agent_smith import CancelledError, LlmClient, Runtime, UserMessage
from agent_smith.llm.request import LlmRequest
from tests.support.llm_server import ScriptedLlmServer

pytestmark = pytest.mark.slow

REQUESTS = 10_000
THREADS = 2
WAIT = 60.0
ANSWER = "Hello from the scripted server."
REQUEST = LlmRequest((UserMessage("hi"),))


@pytest.fixture
def frequent_switches() -> Iterator[None]:
    """Threads switch every 10 µs instead of 5 ms: more interleavings per request."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def _ask(
    client: LlmClient, count: int, outcomes: Counter[str], failures: list[BaseException]
) -> None:
    for n in range(count):
        try:
            if n % 2:
                text = "".join(getattr(e, "text", "") for e in client.stream(REQUEST))
            else:
                text = client.complete(REQUEST).message.content
        except CancelledError:
            outcomes["cancelled"] += 1
        except Exception as err:  # any other error is the finding
            failures.append(err)
        else:
            outcomes["answered" if text == ANSWER else "wrong answer"] += 1


def test_cancels_at_random_moments_of_10000_requests_never_break_a_later_one(
    no_thread_leak: None, runtime: Runtime, frequent_switches: None
) -> None:
    with ScriptedLlmServer(record=False) as server:
        client = LlmClient(server.url, "test", runtime=runtime, max_retries=0)
        stop = threading.Event()

        def cancel_at_random_moments() -> None:
            moments = random.Random(38)
            while not stop.wait(moments.uniform(0, 0.004)):  # about two requests' time
                client.cancel()

        counts = [Counter[str]() for _ in range(THREADS)]  # one per thread: += is not atomic
        failures: list[BaseException] = []
        canceller = threading.Thread(
            target=cancel_at_random_moments, name="agent_smith-test-canceller"
        )
        askers = [
            threading.Thread(
                target=_ask,
                args=(client, REQUESTS // THREADS, counts[n], failures),
                name=f"agent_smith-test-asker-{n}",
            )
            for n in range(THREADS)
        ]
        canceller.start()
        for asker in askers:
            asker.start()
        for asker in askers:
            asker.join(WAIT * 10)
        stop.set()
        canceller.join(WAIT)
        assert failures == []
        outcomes = sum(counts, Counter[str]())
        assert sum(outcomes.values()) == REQUESTS
        assert outcomes["cancelled"] > 0 and outcomes["answered"] > 0, outcomes
        for _ in range(100):  # the pool holds no connection a cancel reached
            assert client.complete(REQUEST).message.content == ANSWER
