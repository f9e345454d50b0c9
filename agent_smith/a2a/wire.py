"""A2A 1.0 on the wire: the JSON shapes both sides build and read, checked.

The protocol's objects travel as the protobuf JSON mapping of its
definition (``lf.a2a.v1``): camelCase fields, enum values such as
``TASK_STATE_INPUT_REQUIRED`` and ``ROLE_USER``, a part being one of
``text``, ``data``, ``url`` or ``raw`` (base64). Both HTTP bindings carry
the same objects: JSON-RPC 2.0 (``SendMessage``, ``SendStreamingMessage``,
``GetTask``, ``CancelTask``, ...) and HTTP+JSON (``POST /message:send``,
``GET /tasks/{id}``, ...), a stream being server-sent events whose data is
one ``StreamResponse`` each (wrapped in a JSON-RPC response on that binding).

Values here are plain JSON (``dict``): what this module adds is building
them in one place and reading untrusted ones into small frozen records
(:class:`TaskView`, :class:`StatusUpdate`, :class:`ArtifactUpdate`), with a
:class:`~agent_smith.errors.A2AProtocolError` for anything of the wrong shape.

Approvals. An agent_smith agent that needs a person's approval puts its
task in ``TASK_STATE_INPUT_REQUIRED`` with a status message holding a text
part (what waits, and how to answer) and a data part
``{"approvals": [{"callId", "tool", "arguments", "description", "agent"}]}``.
The caller's next message on that task decides: a data part
``{"decisions": {callId: true | false | "reason"}}``, or text (``yes`` /
``approve`` approves every waiting call; anything else denies them, the
text being the reason).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import A2AProtocolError

JsonObject = dict[str, Any]

PROTOCOL_VERSION = "1.0"
VERSION_HEADER = "A2A-Version"
#: Where an agent's card is served, below the agent's base URL.
CARD_PATH = "/.well-known/agent-card.json"
JSONRPC = "JSONRPC"
HTTP_JSON = "HTTP+JSON"

SUBMITTED = "TASK_STATE_SUBMITTED"
WORKING = "TASK_STATE_WORKING"
COMPLETED = "TASK_STATE_COMPLETED"
FAILED = "TASK_STATE_FAILED"
CANCELED = "TASK_STATE_CANCELED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
REJECTED = "TASK_STATE_REJECTED"
AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"
#: States a task never leaves.
TERMINAL = frozenset({COMPLETED, FAILED, CANCELED, REJECTED})
#: States where the task waits for the caller (a stream ends there too).
INTERRUPTED = frozenset({INPUT_REQUIRED, AUTH_REQUIRED})
STATES = frozenset({SUBMITTED, WORKING} | TERMINAL | INTERRUPTED)

USER = "ROLE_USER"
AGENT = "ROLE_AGENT"

# JSON-RPC 2.0 and A2A error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003
UNSUPPORTED_OPERATION = -32004
CONTENT_TYPE_NOT_SUPPORTED = -32005
EXTENDED_CARD_NOT_CONFIGURED = -32007
VERSION_NOT_SUPPORTED = -32009

#: The ``google.rpc.ErrorInfo`` reason of each A2A error code (the HTTP+JSON binding's).
ERROR_REASONS: Mapping[int, str] = {
    TASK_NOT_FOUND: "TASK_NOT_FOUND",
    TASK_NOT_CANCELABLE: "TASK_NOT_CANCELABLE",
    PUSH_NOT_SUPPORTED: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    UNSUPPORTED_OPERATION: "UNSUPPORTED_OPERATION",
    CONTENT_TYPE_NOT_SUPPORTED: "CONTENT_TYPE_NOT_SUPPORTED",
    EXTENDED_CARD_NOT_CONFIGURED: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    VERSION_NOT_SUPPORTED: "VERSION_NOT_SUPPORTED",
    INVALID_PARAMS: "INVALID_PARAMS",
    INVALID_REQUEST: "INVALID_REQUEST",
    METHOD_NOT_FOUND: "METHOD_NOT_FOUND",
    INTERNAL_ERROR: "INTERNAL_ERROR",
}

#: Words that approve every waiting call when the caller answers with text.
APPROVING_WORDS = frozenset({"yes", "y", "approve", "approved", "ok", "allow", "allowed"})


def new_id() -> str:
    """A random (version 4) UUID as 32 hex digits: ``uuid.uuid4().hex`` without the UUID object."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # the version
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    return raw.hex()


def timestamp() -> str:
    """Now as an RFC 3339 UTC timestamp (the protobuf JSON form of a Timestamp)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def text_message(
    text: str, *, role: str = USER, context_id: str = "", task_id: str = "", data: Any = None
) -> JsonObject:
    """A message of one text part (and a data part when ``data`` is given)."""
    parts: list[JsonObject] = [{"text": text}]
    if data is not None:
        parts.append({"data": data})
    message: JsonObject = {"messageId": new_id(), "role": role, "parts": parts}
    if context_id:
        message["contextId"] = context_id
    if task_id:
        message["taskId"] = task_id
    return message


def text_of(parts: object) -> str:
    """The text parts of ``parts`` joined (other parts skipped)."""
    if not isinstance(parts, list):
        return ""
    if len(parts) == 1:  # the usual case (a streamed token): no generator
        text = parts[0].get("text") if isinstance(parts[0], dict) else None
        return text if isinstance(text, str) else ""
    return "".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def data_of(parts: object) -> list[Any]:
    """The values of the data parts of ``parts``."""
    if not isinstance(parts, list):
        return []
    return [p["data"] for p in parts if isinstance(p, dict) and "data" in p]


@dataclass(frozen=True)
class TaskView:
    """A task as read from an answer: its ids, state, status message and artifacts' text."""

    id: str
    context_id: str
    state: str
    message: JsonObject | None = None
    artifacts: tuple[JsonObject, ...] = ()
    history: tuple[JsonObject, ...] = ()
    raw: JsonObject = field(default_factory=dict, compare=False, repr=False)

    @property
    def text(self) -> str:
        """The artifacts' text, else the status message's."""
        text = "".join(text_of(a.get("parts")) for a in self.artifacts)
        return text or self.status_text

    @property
    def status_text(self) -> str:
        return text_of(self.message.get("parts")) if self.message else ""


@dataclass(frozen=True)
class StatusUpdate:
    """A stream's ``statusUpdate``: the task's new state and its status message."""

    task_id: str
    context_id: str
    state: str
    message: JsonObject | None = None

    @property
    def text(self) -> str:
        return text_of(self.message.get("parts")) if self.message else ""


@dataclass(frozen=True)
class ArtifactUpdate:
    """A stream's ``artifactUpdate``: a piece of an artifact (``append``: to what came before)."""

    task_id: str
    context_id: str
    artifact_id: str
    text: str
    append: bool = False
    last_chunk: bool = False


@dataclass(frozen=True)
class AgentMessage:
    """An answer that is a message, not a task (an agent that answers at once)."""

    message: JsonObject

    @property
    def text(self) -> str:
        return text_of(self.message.get("parts"))


StreamItem = TaskView | StatusUpdate | ArtifactUpdate | AgentMessage


def _object(value: object, what: str, agent: str) -> JsonObject:
    if not isinstance(value, dict):
        raise A2AProtocolError(f"{what} is not a JSON object", agent=agent)
    return value


def _string(obj: Mapping[str, Any], key: str, what: str, agent: str, *, required: bool) -> str:
    value = obj.get(key, "")
    if not isinstance(value, str) or (required and not value):
        raise A2AProtocolError(f"{what} has no {key!r} string", agent=agent)
    return value


def _status(value: object, what: str, agent: str) -> tuple[str, JsonObject | None]:
    status = _object(value, f"{what}.status", agent)
    state = status.get("state")
    if state not in STATES:
        raise A2AProtocolError(f"{what} has an unknown task state {state!r}", agent=agent)
    message = status.get("message")
    if message is not None:
        message = read_message(message, agent=agent, what=f"{what}.status.message")
    return str(state), message


def read_message(value: object, *, agent: str, what: str = "message") -> JsonObject:
    """``value`` checked as a Message (messageId, role, a list of parts)."""
    message = _object(value, what, agent)
    _string(message, "messageId", what, agent, required=True)
    if message.get("role") not in (USER, AGENT):
        raise A2AProtocolError(f"{what} has an unknown role {message.get('role')!r}", agent=agent)
    parts = message.get("parts")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise A2AProtocolError(f"{what} has no list of parts", agent=agent)
    return message


def read_task(value: object, *, agent: str, what: str = "task") -> TaskView:
    """``value`` checked as a Task."""
    task = _object(value, what, agent)
    state, message = _status(task.get("status"), what, agent)
    artifacts = task.get("artifacts", [])
    history = task.get("history", [])
    if not isinstance(artifacts, list) or not all(isinstance(a, dict) for a in artifacts):
        raise A2AProtocolError(f"{what}.artifacts is not a list of objects", agent=agent)
    if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
        raise A2AProtocolError(f"{what}.history is not a list of objects", agent=agent)
    return TaskView(
        _string(task, "id", what, agent, required=True),
        _string(task, "contextId", what, agent, required=False),
        state,
        message,
        tuple(artifacts),
        tuple(history),
        task,
    )


def read_send_result(value: object, *, agent: str) -> TaskView | AgentMessage:
    """A ``SendMessageResponse``: the task, or the agent's message."""
    result = _object(value, "SendMessage result", agent)
    if "task" in result:
        return read_task(result["task"], agent=agent)
    if "message" in result:
        return AgentMessage(read_message(result["message"], agent=agent))
    raise A2AProtocolError("SendMessage result holds neither a task nor a message", agent=agent)


def read_stream_item(value: object, *, agent: str) -> StreamItem:
    """One ``StreamResponse``: a task, a message, a status update or an artifact update."""
    item = _object(value, "stream event", agent)
    # An artifact update first: a streamed answer sends one per token.
    if "artifactUpdate" in item:
        update = _object(item["artifactUpdate"], "artifactUpdate", agent)
        artifact = _object(update.get("artifact"), "artifactUpdate.artifact", agent)
        parts = artifact.get("parts")
        if not isinstance(parts, list):
            raise A2AProtocolError("artifactUpdate.artifact has no list of parts", agent=agent)
        return ArtifactUpdate(
            _string(update, "taskId", "artifactUpdate", agent, required=True),
            _string(update, "contextId", "artifactUpdate", agent, required=False),
            _string(artifact, "artifactId", "artifactUpdate.artifact", agent, required=False),
            text_of(parts),
            update.get("append") is True,
            update.get("lastChunk") is True,
        )
    if "statusUpdate" in item:
        update = _object(item["statusUpdate"], "statusUpdate", agent)
        state, message = _status(update.get("status"), "statusUpdate", agent)
        return StatusUpdate(
            _string(update, "taskId", "statusUpdate", agent, required=True),
            _string(update, "contextId", "statusUpdate", agent, required=False),
            state,
            message,
        )
    if "task" in item:
        return read_task(item["task"], agent=agent)
    if "message" in item:
        return AgentMessage(read_message(item["message"], agent=agent))
    raise A2AProtocolError(f"unknown stream event with keys {sorted(item)[:5]}", agent=agent)


def approvals_of(message: JsonObject | None) -> list[JsonObject]:
    """The approval requests an agent_smith agent put in an input-required status message."""
    if message is None:
        return []
    for data in data_of(message.get("parts")):
        if isinstance(data, dict) and isinstance(data.get("approvals"), list):
            return [a for a in data["approvals"] if isinstance(a, dict)]
    return []


def decisions_message(
    decisions: Mapping[str, bool | str], *, context_id: str, task_id: str
) -> JsonObject:
    """The answer to an input-required task of an agent_smith agent: one decision per call."""
    approved = sum(1 for d in decisions.values() if d is True)
    text = f"{approved} of {len(decisions)} call(s) approved"
    return text_message(
        text, context_id=context_id, task_id=task_id, data={"decisions": dict(decisions)}
    )


def error_info(code: int) -> list[JsonObject]:
    """The ``details`` of an HTTP+JSON error answer: one google.rpc.ErrorInfo for ``code``."""
    return [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": ERROR_REASONS.get(code, "INTERNAL_ERROR"),
            "domain": "a2a-protocol.org",
            "metadata": {},
        }
    ]


def error_code(details: object) -> int | None:
    """The A2A error code an HTTP+JSON error answer's ``details`` name, if any."""
    if not isinstance(details, list):
        return None
    reasons = {reason: code for code, reason in ERROR_REASONS.items()}
    for detail in details:
        if isinstance(detail, dict) and detail.get("reason") in reasons:
            return reasons[detail["reason"]]
    return None
