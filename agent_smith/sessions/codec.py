"""A stored message's form: one message's JSON per row, the form ``messages_to_json`` writes.

Both stores keep each message as the JSON text of
:func:`~agent_smith.base.history_json.message_to_dict` and read rows back
here, so a row written by one store reads the same in the other, and a row
that is not one stored message is a :class:`~agent_smith.errors.SessionError`
naming the session and the row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from .._internal import json_input
from ..base.history_json import message_from_dict, message_to_dict
from ..errors import ParseError, SessionError
from ..messages import Message


def encode(message: Message) -> str:
    """The row text of ``message``."""
    return json.dumps(message_to_dict(message), ensure_ascii=False)


def decode(
    rows: Iterable[tuple[object]], damaged: Callable[[str], SessionError]
) -> tuple[Message, ...]:
    """The messages of ``rows`` as they arrive, each row's JSON parsed and dropped in turn.

    Nothing is kept of a row but its message, so a long load allocates (and
    wakes the garbage collector) no more than its messages need. A row that
    does not hold one message raises ``damaged(what is wrong with it)``.
    """
    messages: list[Message] = []
    i = 0  # the row a failure names
    try:
        for i, (body,) in enumerate(rows):
            if type(body) is not str:
                raise ParseError(f"message {i} is stored as {type(body).__name__}, not text")
            messages.append(message_from_dict(json_input.loads(body), f"message {i}"))
    except json.JSONDecodeError as err:
        raise damaged(f"message {i} is not valid JSON ({err.msg})") from err
    except ParseError as err:
        raise damaged(str(err)) from err
    return tuple(messages)
