"""Running an ``async def`` tool from the synchronous dispatcher.

A coroutine gets a private event loop: on the calling worker thread, or on a
short-lived named thread when that thread already runs a loop (``asyncio.run``
refuses to nest). The call's cancellation token cancels the task.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import threading
from collections.abc import Awaitable, Coroutine
from typing import Any

from ..base.cancellation import CancellationToken
from ..errors import CancelledError

_async_threads = itertools.count()


def run_awaitable(awaitable: Awaitable[Any], cancel: CancellationToken) -> Any:
    """Await ``awaitable`` to completion; raise CancelledError if ``cancel`` fired."""
    try:
        return _run(_as_coroutine(awaitable), cancel)
    except asyncio.CancelledError as err:
        raise CancelledError("async tool was cancelled", operation="tool") from err


async def _as_coroutine(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _run(coro: Coroutine[Any, Any, Any], cancel: CancellationToken) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_cancellable(coro, cancel))
    outcome: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(asyncio.run(_cancellable(coro, cancel)))
        except BaseException as err:  # handed to the caller's thread below
            failure.append(err)

    thread = threading.Thread(
        target=contextvars.copy_context().run,  # the caller's context (its trace, say)
        args=(run,),
        name=f"agent_smith-async-tool-{next(_async_threads)}",
        daemon=True,
    )
    thread.start()
    # The coroutine is bounded by the call's token: the dispatcher cancels it
    # on timeout, which ends this thread.
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


async def _cancellable(coro: Coroutine[Any, Any, Any], cancel: CancellationToken) -> Any:
    loop = asyncio.get_running_loop()
    task = loop.create_task(coro)

    def cancel_task() -> None:
        # RuntimeError: the loop already closed, so there is nothing left to cancel.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(task.cancel)

    unregister = cancel.on_cancel(cancel_task)
    try:
        return await task
    finally:
        unregister()
