"""``agent-smith durable``: list, inspect and steer the durable turns of a database.

    agent-smith durable [--database PATH|URL] list [--status STATUS] [--limit N]
    agent-smith durable [--database PATH|URL] show TURN
    agent-smith durable [--database PATH|URL] cancel TURN
    agent-smith durable [--database PATH|URL] resume TURN
    agent-smith durable [--database PATH|URL] approve TURN CALL_ID
    agent-smith durable [--database PATH|URL] deny TURN CALL_ID [--reason TEXT]

It works as an operator's process (:class:`~agent_smith.durable.DurableTurns`):
it reads and sends, and never runs or recovers a turn itself. DBOS is the
optional extra ``agent-smith[durable]``, imported only here. Exit status: 0;
1 for a fatal problem (no such turn, a database that cannot be reached, the
extra missing); 2 for bad options.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from .._internal.extras import install_hint
from ..errors import AgentSmithError

if TYPE_CHECKING:
    from ..durable.operations import DurableTurns, TurnInfo

EXIT_FATAL = 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-smith durable", description="List, inspect and steer durable turns."
    )
    parser.add_argument(
        "--database",
        default="agent_smith_durable.sqlite",
        help="the durable database: an SQLite file or a postgresql:// URL (default: %(default)s)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="the newest turns first")
    listing.add_argument(
        "--status", help="only turns of this status (SUCCESS, PENDING, WAITING, CANCELLED, ...)"
    )
    listing.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    for name, text in (
        ("show", "one turn and its recorded steps"),
        ("cancel", "cancel a turn wherever it runs"),
        ("resume", "run a cancelled or failed turn again from its record"),
    ):
        commands.add_parser(name, help=text).add_argument("turn")
    approve = commands.add_parser("approve", help="let a waiting call run")
    deny = commands.add_parser("deny", help="refuse a waiting call")
    for sub in (approve, deny):
        sub.add_argument("turn")
        sub.add_argument("call_id")
    deny.add_argument("--reason", default="denied", help="what the model reads")
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        from ..durable.operations import DurableTurns
    except ModuleNotFoundError as err:
        return _fatal(f"durable turns need DBOS ({err.name}): {install_hint('durable')}")
    try:
        with DurableTurns(args.database) as turns:
            return _command(turns, args)
    except AgentSmithError as err:
        return _fatal(str(err))


def _command(turns: DurableTurns, args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.command == "list":
        for info in turns.recent(status=args.status, limit=args.limit):
            out.write(
                f"{info.turn_id}\t{info.status}\t{info.agent}\t{_when(info)}\t{info.message}\n"
            )
        return 0
    if args.command in ("approve", "deny"):
        decision: bool | str = True if args.command == "approve" else args.reason
        turns.decide(args.turn, args.call_id, decision)
        return 0
    found = turns.inspect(args.turn)
    if found is None:
        return _fatal(f"no durable turn {args.turn!r} in {args.database}")
    if args.command == "cancel":
        turns.cancel(args.turn)
    elif args.command == "resume":
        turns.resume(args.turn)
    else:
        out.write(f"turn {found.turn_id}: {found.status}, agent {found.agent!r}, {_when(found)}\n")
        out.write(f"message: {found.message}\n")
        for key, entry in found.steps:
            out.write(f"  {key}\t{entry.state}\t{(entry.record or '')[:120]}\n")
        for call in turns.waiting(args.turn):
            out.write(f"waiting for a decision: {call['call_id']} {call['tool']}\n")
    return 0


def _when(info: TurnInfo) -> str:
    return datetime.fromtimestamp(info.updated / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _fatal(text: str) -> int:
    sys.stderr.write(f"agent-smith durable: error: {text}\n")
    return EXIT_FATAL
