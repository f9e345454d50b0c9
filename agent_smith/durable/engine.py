"""The durable engine: DBOS in this process, its database, and the turn workflow.

:class:`DurableEngine` configures DBOS (one per process: DBOS is a process
singleton) on a database URL — SQLite by default, a file beside the program;
``postgresql://...`` for many hosts — with our JSON as its serialiser, and
opens the step journal (:mod:`~agent_smith.durable.journal`) on the same
database. Durable agents are registered with it before :meth:`launch`, which
recovers the turns a dead process left pending: DBOS re-runs each one's
workflow, and the journal replays its recorded steps.

The workflow is one function for every agent, :func:`_turn_workflow`: its
inputs are the agent's name and the user's message (JSON strings), so a fresh
process finds the agent by name among those registered. A turn that paused
for a decision goes on in later runs, :func:`_run_workflow`, enqueued by the
decision (:mod:`~agent_smith.durable.waiting`).

Many processes, many hosts: on one PostgreSQL database every process runs
its engine with an ``executor_id`` of its own (stable across its restarts:
``"web-1"``, a pod's name). A process recovers at launch only the turns it
started itself; the turns of a process that died for good are taken over by
any other with :meth:`DurableEngine.recover` (DBOS resumes them on its
queue, and the journal replays their recorded steps).

What a commit survives is the engine's ``synchronous`` (:func:`open_database`):
``"normal"``, the death of this process, without waiting for the disk;
``"full"``, a power cut too (and on PostgreSQL a crash of the server), each
commit waiting for its flush. SQLite defaults to ``"normal"``, PostgreSQL to
``"full"`` (docs/durable.md says why).
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, DBOSConfig
from dbos._serialization import DBOSPortableJSONSerializer
from sqlalchemy.exc import SQLAlchemyError

from ..errors import ConfigError, DurableStateError
from .journal import Journal, database_errors
from .queues import check_limits, register_queue
from .waiting import RUN_WORKFLOW, deny_at_deadline, register_runs_queue, runs_queue

if TYPE_CHECKING:
    from .agent import DurableAgent
    from .chat import DurableChat

log = logging.getLogger(__name__)

#: The name of the workflow every durable turn runs as.
TURN_WORKFLOW = "agent_smith.durable_turn"

#: The database a :class:`DurableEngine` uses when given none: a file in the working folder.
DEFAULT_DATABASE = "agent_smith_durable.sqlite"

#: What a commit survives: the death of this process (``"normal"``), or a power cut too.
Synchronous = Literal["normal", "full"]

_registry_lock = threading.Lock()
_agents: dict[str, DurableAgent] = {}  # registered by name; the workflow finds them here
_chats: dict[str, DurableChat] = {}  # the same for the chat turns of :mod:`.chat`
_engine: list[DurableEngine] = []  # the one engine of this process, while it is open


def database_url(database: str | Path) -> str:
    """An SQLAlchemy URL: a URL as it is, a path as an SQLite file."""
    text = str(database)
    if "://" in text:
        if text.startswith(("postgresql://", "postgres://")):
            return "postgresql+psycopg://" + text.split("://", 1)[1]
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


class DurableEngine:
    """DBOS and the step journal on ``database`` (see the module doc).

    ``app`` is the DBOS application name (lowercase letters, digits, ``-``,
    ``_``); ``executor_id`` names this process among those sharing the
    database (DBOS's default, ``"local"``, when there is one). ``synchronous``
    says what each of its commits survives (:func:`open_database`): ``"normal"``
    (SQLite's default) the death of this process, ``"full"`` (PostgreSQL's
    default) a power cut or a crash of the database server too. Only one engine
    may be open in a process. Raises
    :class:`~agent_smith.errors.DurableStateError` at once when the database
    cannot be reached.
    """

    def __init__(
        self,
        database: str | Path = DEFAULT_DATABASE,
        *,
        app: str = "agent-smith",
        executor_id: str | None = None,
        synchronous: Synchronous | None = None,
    ) -> None:
        self.url = database_url(database)
        self.executor_id = executor_id
        #: What each commit survives, ``synchronous`` or the database's default.
        self.synchronous = commit_durability(self.url, synchronous)
        self._queues: dict[str, tuple[int | None, int | None]] = {}  # worked here: limits
        with _registry_lock:
            if _engine:
                raise ConfigError(
                    "a durable engine is already open in this process; close it first"
                )
            _engine.append(self)
        try:
            self._database = open_database(self.url, self.synchronous)
            self.journal = Journal(self._database)
            config: DBOSConfig = {
                "name": app,
                "system_database_url": self.url,
                "system_database_engine": self._database,
                "application_version": "agent_smith",  # replay safety is the journal's check
                "log_level": "WARNING",
                "serializer": DBOSPortableJSONSerializer(),
                "executor_id": executor_id,
            }
            DBOS(config=config)
            self.client = DBOSClient(
                system_database_engine=self._database,
                serializer=DBOSPortableJSONSerializer(),
                application_name=app,
            )
        except BaseException:
            with _registry_lock:
                _engine.clear()
            raise

    def launch(self) -> None:
        """Start DBOS: the turns that a dead process left pending are recovered now."""
        with _registry_lock:
            agents = list(_agents)
        DBOS.listen_queues([*map(runs_queue, agents), *self._queues])
        DBOS.launch()
        for agent in agents:
            register_runs_queue(agent)
        for name, (concurrency, per_process) in self._queues.items():
            register_queue(name, concurrency, per_process)

    def work_queue(
        self, name: str, *, concurrency: int | None = None, per_process: int | None = None
    ) -> None:
        """Take the turns and calls enqueued on ``name`` in this process too (call it before
        :meth:`launch`): at most ``concurrency`` at once across every process that works the
        queue, ``per_process`` in this one (None: no limit)."""
        check_limits(name, concurrency, per_process)
        self._queues[name] = (concurrency, per_process)

    def recover(self, executor_id: str) -> list[str]:
        """Take over the unfinished turns of the process ``executor_id``, which died and
        will not start again; their ids. They resume on this launched engine from their
        record (run this once: the turns of a live process would run twice)."""
        with database_errors(self.url):
            pending = DBOS.list_workflows(
                status="PENDING", executor_id=executor_id, load_input=False, load_output=False
            )
            for workflow in pending:  # sub-turns too: a turn waits for its children
                DBOS.resume_workflow(workflow.workflow_id)
        log.info("took over %d workflows of executor %s", len(pending), executor_id)
        return [w.workflow_id for w in pending if w.name == TURN_WORKFLOW]

    def close(self) -> None:
        """Stop DBOS (a running turn is recovered by the next launch), the journal and the
        registered chats."""
        DBOS.destroy(destroy_registry=False)
        self.client.destroy()
        self._database.dispose()
        with _registry_lock:
            chats = list(_chats.values())
            _engine.clear()
            _agents.clear()
            _chats.clear()
        for chat in chats:
            chat.close()

    def __enter__(self) -> DurableEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def register(self, durable: DurableAgent) -> None:
        """Make ``durable``'s turns runnable and recoverable here (before :meth:`launch`)."""
        _add(_agents, "agent", durable.name, durable)

    def register_chat(self, chat: DurableChat) -> None:
        """Make ``chat``'s turns runnable and recoverable here (before :meth:`launch`)."""
        _add(_chats, "chat", chat.name, chat)


def commit_durability(url: str, synchronous: Synchronous | None) -> Synchronous:
    """``synchronous`` checked, or the default of the database at ``url``: ``"normal"`` on
    SQLite, ``"full"`` on PostgreSQL."""
    if synchronous is None:
        return "normal" if url.startswith("sqlite") else "full"
    if synchronous not in ("normal", "full"):
        raise ConfigError(f"synchronous must be 'normal' or 'full', got {synchronous!r}")
    return synchronous


def open_database(url: str, synchronous: Synchronous | None = None) -> sa.Engine:
    """The database's engine, connected once: an unreachable database fails now, not later.

    Its connections (the journal's and DBOS's: DBOS runs on this engine) commit
    as ``synchronous`` says (the database's default if None). SQLite runs in
    WAL mode, ``"normal"`` with ``synchronous=NORMAL``: a commit survives the
    death of the process (what durable turns are about) without an fsync;
    ``"full"`` with ``synchronous=FULL``, an fsync per commit. On PostgreSQL
    ``"normal"`` sets ``synchronous_commit=off`` on these connections alone (a
    libpq option, not the server's setting): a commit returns before its WAL
    flush, which the server does within a fraction of a second; ``"full"``
    leaves the server's own ``synchronous_commit`` (``on`` unless set otherwise).
    """
    sqlite = url.startswith("sqlite")
    level = commit_durability(url, synchronous)
    args: dict[str, Any] = {"timeout": 30} if sqlite else {"connect_timeout": 5}
    if not sqlite and level == "normal":
        args["options"] = _with_option(url, "-c synchronous_commit=off")
    try:
        engine = sa.create_engine(url, connect_args=args)
    except ModuleNotFoundError as err:
        raise DurableStateError(f"no driver for the durable database {url!r}: {err}") from err
    if sqlite:
        pragma = f"PRAGMA synchronous={level.upper()}"
        sa.event.listen(engine, "connect", lambda conn, _record: _sqlite_pragmas(conn, pragma))
    try:
        with engine.connect():
            pass
    except SQLAlchemyError as err:
        engine.dispose()
        raise DurableStateError(f"cannot reach the durable database {url!r}: {err}") from err
    return engine


def _sqlite_pragmas(connection: Any, synchronous: str) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(synchronous)
    cursor.close()


def _with_option(url: str, option: str) -> str:
    """libpq's ``options`` of ``url`` (its ``?options=``, if any) with ``option`` added."""
    given = sa.make_url(url).query.get("options", ())
    return " ".join([*([given] if isinstance(given, str) else given), option])


@DBOS.workflow(name=TURN_WORKFLOW)
def _turn_workflow(agent_name: str, message: str) -> str:
    """One durable turn of the agent named ``agent_name``: its final answer as JSON, or
    ``""`` when it paused for a decision (a later run goes on)."""
    turn_id = DBOS.workflow_id or ""
    return _run(agent_name, turn_id, message)


@DBOS.workflow(name=RUN_WORKFLOW)
def _run_workflow(agent_name: str, turn_id: str, message: str, call_id: str, reason: str) -> str:
    """A later run of turn ``turn_id``, after a decision; with a ``call_id``, the deadline of
    that call's wait, which denies it for ``reason`` unless it was decided."""
    journal = _agent(agent_name, turn_id).engine.journal
    if call_id and not deny_at_deadline(journal, turn_id, call_id, reason):
        return ""  # decided in time: the run of that decision goes on
    return _run(agent_name, turn_id, message)


def _run(agent_name: str, turn_id: str, message: str) -> str:
    answer = _agent(agent_name, turn_id).run_turn(turn_id, message)
    return "" if answer is None else json.dumps(answer, ensure_ascii=False)


def _agent(agent_name: str, turn_id: str) -> DurableAgent:
    return _registered(_agents, "agent", agent_name, turn_id)


def chat_named(name: str, turn_id: str) -> DurableChat:
    """The durable chat registered as ``name`` (DurableStateError naming the turn if none)."""
    return _registered(_chats, "chat", name, turn_id)


_T = TypeVar("_T")


def _add(registry: dict[str, _T], kind: str, name: str, value: _T) -> None:
    with _registry_lock:
        if name in registry:
            raise ConfigError(f"a durable {kind} named {name!r} is registered already")
        registry[name] = value


def _registered(registry: dict[str, _T], kind: str, name: str, turn_id: str) -> _T:
    with _registry_lock:
        value = registry.get(name)
    if value is None:
        raise DurableStateError(
            f"durable turn {turn_id!r}: no durable {kind} named {name!r} is registered in "
            "this process",
            turn_id=turn_id,
        )
    return value
