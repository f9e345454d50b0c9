"""Fitting what an agent sends into its model's context window: a big tool result breaks nothing.

Measured on the demo: a file tool returned ~64 KiB into an 8,192-token
window, the server answered HTTP 400, and every later turn failed the same
way (the result stayed in the history). Three rules, all estimated at ~4
characters per token (:func:`agent_smith.memory.estimate_tokens`):

* **Results are cut as they arrive.** Before a round's tool results enter
  the history, each is cut to its share of the room the window has left
  (the window minus what was sent, minus room for the reply, with a
  margin), keeping at least :data:`MIN_RESULT_CHARS`, and ends with
  :data:`CUT_NOTE` telling the model how much it saw and how to read more.
  Rounds whose results add up to less than :data:`CUT_FLOOR` characters are
  left alone and cost nothing.
* **An overflow is trimmed and sent once more.** A request the server
  refuses as too long (:class:`~agent_smith.errors.ContextOverflowError`) is
  trimmed and retried once: first the tool results in it are cut, then the
  oldest messages dropped (whole tool-call groups,
  :func:`~agent_smith.memory.keep_newest`; the system prompt and the newest
  message always stay). The target is the window the answer names, scaled
  by how far the server's token count was from the estimate; when the
  answer names no window, half the request. A second refusal raises.
* **Once the window is known, requests are trimmed before they are sent.**
  So the oversized result that is still in the history (the history is
  never rewritten: only what is sent is trimmed) does not cost a refused
  request on every later round. When the server counted the last request
  (``usage.prompt_tokens``) higher than the estimate, the next requests of
  the turn are trimmed by that count: the room is scaled by how far the
  estimate ran low.

The window is ``AgentConfig.context_window`` if set (or what the server
named, if smaller), else what the client knows of its server
(``LlmClient.context_window()``: llama-server's ``/props``, asked once and
only when a round's results are over ``CUT_FLOOR``, or the ``n_ctx`` of an
overflow answer). When nothing says, results are capped by
``tool_result_max_bytes`` alone and an overflow still gets its one trimmed
retry.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..errors import ContextOverflowError
from ..llm.request import LlmRequest
from ..memory import CHARS_PER_TOKEN, estimate_tokens, keep_newest
from ..messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage
from ..tools.base import ToolSchema

log = logging.getLogger(__name__)

#: A round's results below this many characters in all are never cut (nor the window asked).
CUT_FLOOR = 2048
#: The least of a result that is kept, however full the window.
MIN_RESULT_CHARS = 256
#: Ends a cut result (what the model sees of it, and how to read more).
CUT_NOTE = (
    "\n…[cut to fit the model's context window: this is the first {shown} of {total} "
    "characters. To read more, call the tool again for a smaller part (a line range, "
    "an offset or a narrower query) if it takes one.]"
)
#: Room kept for the reply when the request sets no ``max_tokens``: this share of the window.
_REPLY_SHARE = 4
#: What of the estimated room is used: the estimate runs low on code and JSON.
_MARGIN = 0.8

WindowSource = Callable[..., int | None]


def _fixed(size: int) -> WindowSource:
    def window(*, ask: bool) -> int:
        return size

    return window


class ContextFit:
    """One turn's fitting of results and requests into the window (see the module doc)."""

    __slots__ = ("_ask", "_configured", "_scale")

    def __init__(self, configured: int | None, llm: object) -> None:
        self._configured = configured
        self._scale = 1.0  # the server's count of the last request over its estimate (>= 1)
        self._ask: WindowSource | None = getattr(llm, "context_window", None)
        if self._ask is None:  # a chat model that knows its window says so in its capabilities
            size = getattr(getattr(llm, "capabilities", None), "context_size", None)
            if isinstance(size, int):
                self._ask = _fixed(size)

    def window(self, *, ask: bool) -> int | None:
        """The window in tokens: the configured one or the client's, the smaller if both.

        The server is asked (``ask``) only when nothing is configured.
        """
        configured = self._configured
        known = None
        if self._ask is not None:
            known = self._ask(ask=ask and configured is None)
        if configured is None or known is None:
            return configured if known is None else known
        return min(configured, known)

    def cut_results(
        self,
        results: list[ToolMessage],
        sent: Sequence[Message],
        calls: Sequence[ToolCall],
        *,
        tools: Sequence[ToolSchema] = (),
        reply_tokens: int | None = None,
    ) -> list[ToolMessage]:
        """``results`` cut to the room the window leaves (see the module doc).

        ``sent``, ``calls`` and ``tools`` are what the model has seen before
        the results: the last request's messages (the history when there is
        none), the calls it made and the tools offered; ``reply_tokens`` the
        request's ``max_tokens``.
        """
        if sum(len(result.text) for result in results) < CUT_FLOOR:
            return results
        window = self.window(ask=True)
        if window is None:
            return results
        seen = _estimate(sent) + estimate_tokens(AssistantMessage("", tuple(calls)))
        seen += _tools_tokens(tools)
        overhead = estimate_tokens(ToolMessage("", "", CUT_NOTE)) + 8  # note, ids, rounding
        room = request_room(window, reply_tokens) * _MARGIN - seen - overhead * len(results)
        limits = _shares([len(r.text) for r in results], int(room) * CHARS_PER_TOKEN)
        cut = [_cut(result, limit) for result, limit in zip(results, limits, strict=True)]
        if cut != results:
            log.info(
                "tool results cut to fit a %d-token context window: %s",
                window,
                ", ".join(f"{r.name} {len(r.text)} chars" for r in results),
            )
        return cut

    def observed(self, prompt_tokens: int | None, sent: LlmRequest) -> None:
        """The server's count of ``sent``, the request just answered (None or 0: not said).

        Only with a known window (where requests are trimmed): later requests
        are trimmed by the server's count where the estimate ran low.
        """
        if not prompt_tokens or self.window(ask=False) is None:
            return
        estimated = _estimate(sent.messages) + _tools_tokens(sent.tools)
        self._scale = max(prompt_tokens / estimated, 1.0) if estimated else 1.0

    def before_sending(self, request: LlmRequest) -> LlmRequest:
        """``request`` trimmed to the window if one is known and it would not fit."""
        window = self.window(ask=False)
        if window is None:
            return request
        room = request_room(window, request.sampling.max_tokens) * _MARGIN / self._scale
        target = int(room) - _tools_tokens(request.tools)
        if _estimate(request.messages) <= target:
            return request
        return _trimmed(request, target) or request

    def after_overflow(
        self, request: LlmRequest, overflow: ContextOverflowError
    ) -> LlmRequest | None:
        """A smaller ``request`` to try once more after ``overflow``, or None if none is smaller."""
        estimated = _estimate(request.messages)
        window = overflow.context_window or self.window(ask=False)
        if window is None:
            target = estimated // 2
        else:
            tools = _tools_tokens(request.tools)
            room = request_room(window, request.sampling.max_tokens) * _MARGIN
            if overflow.prompt_tokens:  # the server's count: correct the estimate by it
                room = room * (estimated + tools) / overflow.prompt_tokens
            target = int(room) - tools
        smaller = _trimmed(request, target)
        if smaller is not None:
            log.warning(
                "%s; sending it again trimmed from ~%d to ~%d tokens (estimated)",
                overflow,
                estimated,
                _estimate(smaller.messages),
            )
        return smaller


def request_room(window: int, reply_tokens: int | None) -> int:
    """The tokens a request may take in ``window``, leaving room for the reply."""
    reserve = window // _REPLY_SHARE
    if reply_tokens is not None:
        reserve = min(reply_tokens, reserve)
    return window - reserve


def _estimate(messages: Sequence[Message]) -> int:
    return sum(estimate_tokens(message) for message in messages)


def _tools_tokens(tools: Sequence[ToolSchema]) -> int:
    """The offered tools' share of a request: their schemas as the server sees them."""
    if not tools:
        return 0
    chars = sum(len(json.dumps(schema.to_openai(), ensure_ascii=False)) for schema in tools)
    return -(-chars // CHARS_PER_TOKEN)


def _trimmed(request: LlmRequest, target: int) -> LlmRequest | None:
    """``request`` with its messages fitted into ``target`` tokens; None if nothing could go."""
    messages = list(request.messages)
    system = messages.pop(0) if messages and isinstance(messages[0], SystemMessage) else None
    budget = target - (estimate_tokens(system) if system is not None else 0)
    fixed = sum(estimate_tokens(m) for m in messages if not isinstance(m, ToolMessage))
    sizes = [len(m.text) for m in messages if isinstance(m, ToolMessage)]
    if sizes:
        limits = iter(_shares(sizes, (budget - fixed - 4 * len(sizes)) * CHARS_PER_TOKEN))
        messages = [_cut(m, next(limits)) if isinstance(m, ToolMessage) else m for m in messages]
    if _estimate(messages) > budget:
        messages = keep_newest(messages, max_messages=None, max_tokens=budget)
    fitted = (system, *messages) if system is not None else tuple(messages)
    if _estimate(fitted) >= _estimate(request.messages):
        return None
    return replace(request, messages=fitted)


def _shares(sizes: Sequence[int], room: int) -> list[int]:
    """Character limits for results of ``sizes`` sharing ``room``: small ones whole, big equal."""
    limits = [0] * len(sizes)
    left = max(room, 0)
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    for position, index in enumerate(order):
        share = max(left // (len(sizes) - position), MIN_RESULT_CHARS)
        limits[index] = share
        left -= min(sizes[index], share)
    return limits


def _cut(result: ToolMessage, limit: int) -> ToolMessage:
    content = result.content
    if not isinstance(content, str) or len(content) <= limit:  # parts are not cut
        return result
    note = CUT_NOTE.format(shown=limit, total=len(content))
    return replace(result, content=content[:limit] + note)
