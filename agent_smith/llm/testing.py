"""An in-process chat model for unit-testing agent logic: scripted replies, no HTTP.

:class:`TestModel` is a :class:`~agent_smith.llm.model.ChatModel` that plays
a script of replies (text, tool calls, whole messages, errors) or asks a
function of yours for each reply, so an application's agent, tools, typed
output and approvals are tested in milliseconds without a server::

    model = TestModel([call("get_weather", city="Paris"), "It is sunny."])
    agent = Agent(model, tools=[get_weather])
    assert agent.send("Weather in Paris?").content == "It is sunny."
    assert model.requests[1].messages[-1].content == "sunny"   # the tool result

Streaming yields the same events a real server's reply would (text in
word-sized :class:`TokenDelta` pieces, reasoning, tool calls started and
completed, :class:`Finished` last). Every request is kept in
:attr:`TestModel.requests` for assertions.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import AgentSmithError, ConfigError
from ..messages import AssistantMessage, TokenUsage, ToolCall
from .events import (
    StreamEvent,
    TokenDelta,
    response_events,
)
from .model import ModelCapabilities
from .part_support import ANY_PARTS
from .request import LlmRequest, LlmResponse

if TYPE_CHECKING:
    from ..base.cancellation import CancellationToken

#: What one reply of the script (or of the function) may be: text, one or
#: more tool calls, a whole assistant message, or an error to raise.
Reply = str | ToolCall | Sequence[ToolCall] | AssistantMessage | AgentSmithError

_ids = itertools.count(1)
_PIECES = re.compile(r"\S+\s*|\s+")
_OPERATION = "test model request"


def call(name: str, /, **arguments: Any) -> ToolCall:
    """A tool call to script: ``call("get_weather", city="Paris")`` (its id is made up)."""
    return ToolCall(f"call_test_{next(_ids)}", name, dict(arguments))


class TestModel:
    """A scripted :class:`ChatModel` (see the module doc).

    ``replies`` are played in order, one per request; ``respond`` (instead)
    is called with each :class:`LlmRequest` and returns a reply. Running out
    of replies raises :class:`ConfigError`. ``capabilities`` defaults to a
    provider named ``"test"`` with native structured output that takes every
    content part (images, documents, audio). Thread-safe.
    """

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        respond: Callable[[LlmRequest], Reply] | None = None,
        capabilities: ModelCapabilities | None = None,
    ) -> None:
        self._script: deque[Reply] = deque(replies)
        if respond is not None and self._script:
            raise ConfigError("TestModel takes replies or respond, not both")
        self._respond = respond
        self._capabilities = capabilities or ModelCapabilities(
            provider="test", model="test", parts=ANY_PARTS
        )
        self._lock = threading.Lock()
        self.requests: list[LlmRequest] = []

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._capabilities

    @property
    def remaining(self) -> int:
        """How many scripted replies were not played yet."""
        with self._lock:
            return len(self._script)

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse:
        """The next reply to ``request``."""
        if cancel is not None:
            cancel.raise_if_cancelled(_OPERATION)
        return self._reply(request)

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        """The next reply to ``request`` as stream events, ``Finished`` last."""
        if cancel is not None:
            cancel.raise_if_cancelled(_OPERATION)
        for event in response_events(self._reply(request), pieces=_PIECES.findall):
            if cancel is not None and isinstance(event, TokenDelta):
                cancel.raise_if_cancelled(_OPERATION)
            yield event

    def _reply(self, request: LlmRequest) -> LlmResponse:
        with self._lock:
            self.requests.append(request)
            if self._respond is None:
                if not self._script:
                    raise ConfigError(
                        f"TestModel has no reply left for request {len(self.requests)}"
                    )
                reply = self._script.popleft()
        if self._respond is not None:
            reply = self._respond(request)
        return _response(reply, request, self._capabilities.model)


def _response(reply: Reply, request: LlmRequest, model: str) -> LlmResponse:
    if isinstance(reply, AgentSmithError):
        raise reply
    if isinstance(reply, str):
        message = AssistantMessage(reply)
    elif isinstance(reply, ToolCall):
        message = AssistantMessage("", (reply,))
    elif isinstance(reply, AssistantMessage):
        message = reply
    else:
        calls = tuple(reply)
        if not all(isinstance(c, ToolCall) for c in calls):
            raise ConfigError(f"TestModel cannot play a reply of type {type(reply).__name__}")
        message = AssistantMessage("", calls)
    if message.usage is None:
        message = _with_usage(message, request)
    finish = "tool_calls" if message.tool_calls else "stop"
    return LlmResponse(message, finish, model=model)


def _with_usage(message: AssistantMessage, request: LlmRequest) -> AssistantMessage:
    """Token counts estimated at ~4 characters a token, so usage limits can be tested."""
    prompt = sum(len(getattr(m, "content", "") or "") for m in request.messages) // 4 + 1
    completion = len(message.content) + sum(len(c.arguments_text()) for c in message.tool_calls)
    completion = completion // 4 + 1
    return AssistantMessage(
        message.content,
        message.tool_calls,
        TokenUsage(prompt, completion, prompt + completion),
        message.reasoning,
        message.provider_data,
    )
