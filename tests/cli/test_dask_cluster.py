"""The Dask side of ``agent-smith batch``: what it does to logging while it runs."""

from __future__ import annotations

import logging
from concurrent.futures import InvalidStateError

from agent_smith.cli.dask_cluster import _CancelledResultRace


def _record(error: BaseException | None) -> logging.LogRecord:
    exc_info = (type(error), error, None) if error is not None else None
    return logging.LogRecord("tornado.application", logging.ERROR, "x", 1, "boom", (), exc_info)


def test_only_the_cancelled_result_race_is_dropped() -> None:
    race = _CancelledResultRace()
    assert not race.filter(_record(InvalidStateError("CANCELLED: <Future state=cancelled>")))
    assert race.filter(_record(InvalidStateError("FINISHED: <Future state=finished>")))
    assert race.filter(_record(RuntimeError("CANCELLED")))
    assert race.filter(_record(None))
