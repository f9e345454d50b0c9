"""Durable turns on DBOS: a turn survives the death of its process (extra ``[durable]``).

See ``docs/durable.md``. :class:`DurableEngine` runs DBOS on a database (SQLite
by default); :class:`DurableAgent` makes an agent's turns durable workflows;
:class:`DurableChat` the turns of conversations kept in sessions (the web app's).
"""

from . import dbos_logging  # noqa: F401 - before DBOS is imported
from .agent import DurableAgent
from .chat import DurableChat, worker_executor_id
from .engine import DEFAULT_DATABASE, DurableEngine
from .operations import DurableTurns, TurnInfo
from .queues import DurableQueue
from .steps import UNKNOWN_OUTCOME

__all__ = [
    "DEFAULT_DATABASE",
    "UNKNOWN_OUTCOME",
    "DurableAgent",
    "DurableChat",
    "DurableEngine",
    "DurableQueue",
    "DurableTurns",
    "TurnInfo",
    "worker_executor_id",
]
