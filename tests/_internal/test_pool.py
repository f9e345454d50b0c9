from __future__ import annotations

import threading

import pytest

from agent_smith._internal.pool import WorkerPool

BOUND = 10.0


def test_calls_run_concurrently_up_to_capacity(no_thread_leak: None) -> None:
    pool = WorkerPool("test", 3)
    barrier = threading.Barrier(3, timeout=BOUND)
    futures = [pool.submit(barrier.wait) for _ in range(3)]
    assert sorted(f.result(BOUND) for f in futures) == [0, 1, 2]
    pool.close()


def test_exception_is_delivered_through_the_future(no_thread_leak: None) -> None:
    pool = WorkerPool("test", 1)

    def fail() -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        pool.submit(fail).result(BOUND)
    pool.close()


def test_abandoned_call_frees_its_slot_for_later_calls(no_thread_leak: None) -> None:
    pool = WorkerPool("test", 1)
    release = threading.Event()
    started = threading.Event()

    def hang() -> str:
        started.set()
        release.wait(BOUND)
        return "late"

    hung = pool.submit(hang)
    assert started.wait(BOUND)
    queued = pool.submit(lambda: "ran")
    pool.abandon(hung)
    assert queued.result(BOUND) == "ran"  # would block forever without the extra worker
    release.set()
    assert hung.result(BOUND) == "late"
    pool.close()


def test_ten_hung_calls_do_not_starve_the_pool(no_thread_leak: None) -> None:
    pool = WorkerPool("test", 2)
    release = threading.Event()
    hung = [pool.submit(release.wait, BOUND) for _ in range(10)]
    for future in hung:
        pool.abandon(future)
    assert pool.submit(lambda: 42).result(BOUND) == 42
    release.set()
    pool.close()


def test_abandoning_a_queued_call_cancels_it(no_thread_leak: None) -> None:
    pool = WorkerPool("test", 1)
    release = threading.Event()
    running = pool.submit(release.wait, BOUND)
    queued = pool.submit(lambda: "never")
    pool.abandon(queued)
    assert queued.cancelled()
    release.set()
    assert running.result(BOUND) is True
    pool.close()


def test_close_cancels_queued_work_and_refuses_new_work(no_thread_leak: None) -> None:
    pool = WorkerPool("test", 1)
    release = threading.Event()
    running = pool.submit(release.wait, BOUND)
    queued = pool.submit(lambda: "never")
    closer = threading.Thread(target=pool.close)
    closer.start()
    release.set()
    closer.join(BOUND)
    assert running.result(BOUND) is True
    assert queued.cancelled()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)
