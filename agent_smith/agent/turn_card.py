"""A turn's result as a card a notebook shows: the answer, each tool call and its result, usage.

:class:`TurnCard` renders itself through IPython's rich display protocol
(``_repr_html_``, ``_repr_markdown_``) without importing IPython, so a card
that is a cell's value shows as a card. :meth:`TurnCard.from_events` builds
one from a turn's events (``agent.stream(...)``); :class:`CardBuilder` does
it one event at a time for a live view (:func:`agent_smith.notebook.show`).
Whatever the model or a tool wrote is escaped: it shows as text, never runs
as markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from .._internal.closing import close_iterator
from ..errors import AgentStopped
from ..llm.events import Finished, TokenDelta
from ..messages import TokenUsage, ToolCall, ToolMessage
from .events import FinalAnswer, ToolCallRequested, ToolResultReady

#: A tool result longer than this shows its head and how much was left out.
RESULT_SHOWN = 2000

#: Finish reasons of a reply that ended as it meant to.
_NORMAL_FINISH = frozenset({"", "stop", "tool_calls"})
#: What the card says of a reply's other finish reasons (else the reason itself).
_FINISH_NOTES = {"length": "the reply was cut off by its token cap"}

_STYLE = (
    "border:1px solid #8884;border-radius:6px;padding:6px 10px;margin:2px 0;"
    "font-family:system-ui,sans-serif;line-height:1.4"
)
_PRE = "white-space:pre-wrap;margin:2px 0 6px 1.2em;padding:4px 6px;background:#8881"
_ACTIVITY = "opacity:0.75;font-size:90%"
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class CardCall:
    """One tool call of a turn and its result (``None``: it never finished)."""

    call: ToolCall
    result: ToolMessage | None = None


@dataclass(frozen=True)
class TurnCard:
    """What one turn did, shown as a card in Jupyter (HTML) or as Markdown.

    ``answer`` is the final answer's text (while ``working``, the reply so
    far), ``calls`` the tool calls in the order the model made them, each
    with its result, ``usage`` the turn's tokens (and ``cost`` when the
    agent's :class:`~agent_smith.UsageLimits` price its model), ``stop`` why
    the turn ended early or cut (an :class:`~agent_smith.AgentStopped`
    message, or a reply's finish reason such as ``length``), ``working``
    True for a live view of a turn still running.
    """

    answer: str = ""
    calls: tuple[CardCall, ...] = ()
    usage: TokenUsage | None = None
    stop: str | None = None
    working: bool = False

    @classmethod
    def from_events(cls, events: Iterable[object]) -> TurnCard:
        """Run a turn's ``events`` (``agent.stream(...)``) to the end and return its card.

        A typed stop (:class:`~agent_smith.AgentStopped`: repetition, caps,
        usage limits) ends the card with its reason instead of raising; any
        other error is raised.
        """
        builder = CardBuilder()
        for _ in builder.follow(events):
            pass
        return builder.card()

    def _repr_html_(self) -> str:
        return card_html(self)

    def _repr_markdown_(self) -> str:
        return card_markdown(self)


class CardBuilder:
    """Builds a :class:`TurnCard` from a turn's events, one at a time."""

    def __init__(self) -> None:
        self._calls: dict[str, CardCall] = {}
        self._text = ""
        self._answer: str | None = None
        self._usage: TokenUsage | None = None
        self._finish = ""
        self._stopped: str | None = None

    def add(self, event: object) -> bool:
        """Take one event into the card; whether what the card shows changed."""
        if isinstance(event, TokenDelta):
            self._text += event.text
        elif isinstance(event, ToolCallRequested):
            self._calls[event.call.id] = CardCall(event.call)
            self._text = ""  # words before a call lead up to it; the answer comes after
        elif isinstance(event, ToolResultReady):
            result = event.message
            call = self._calls.get(result.tool_call_id)
            if call is None:  # a resumed turn: its calls were asked for before the pause
                call = CardCall(ToolCall(result.tool_call_id, result.name))
            self._calls[result.tool_call_id] = replace(call, result=result)
        elif isinstance(event, FinalAnswer):
            self._answer = event.message.content
            self._usage = event.message.usage  # the whole turn's, priced
        elif isinstance(event, Finished):
            self._finish = event.finish_reason
            if self._answer is None and event.usage is not None:
                self._usage = event.usage if self._usage is None else self._usage + event.usage
            return False
        else:
            return False
        return True

    def follow(self, events: Iterable[object]) -> Iterator[TurnCard]:
        """Take ``events`` in; yield the live card after each change the card shows.

        A typed stop ends the turn on the card's ``stop`` line; stopping
        early (closing this iterator) closes ``events``, which cancels the turn.
        """
        iterator = iter(events)
        try:
            for event in iterator:
                if self.add(event):
                    yield self.card(working=True)
        except AgentStopped as err:
            self._stopped = str(err)
        finally:
            close_iterator(iterator)

    def card(self, *, working: bool = False) -> TurnCard:
        """The card as the events so far show it (``working``: a live view of it)."""
        stop = self._stopped
        if stop is None and self._finish not in _NORMAL_FINISH:
            stop = _FINISH_NOTES.get(self._finish, f"the reply ended: {self._finish}")
        answer = self._text if self._answer is None else self._answer
        return TurnCard(answer, tuple(self._calls.values()), self._usage, stop, working)


# -- rendering ------------------------------------------------------------------


def card_html(card: TurnCard) -> str:
    """The card as one HTML fragment; every text in it escaped."""
    parts = [f'<div class="agent-smith-turn" style="{_STYLE}">']
    for item in card.calls:
        parts.append(_call_html(item))
    if card.answer:
        parts.append(f'<div style="white-space:pre-wrap">{_esc(card.answer)}</div>')
    footer = _footer(card)
    if footer:
        parts.append(f'<div style="opacity:0.65;font-size:85%">{_esc(footer)}</div>')
    parts.append("</div>")
    return "\n".join(parts)


def _call_html(item: CardCall) -> str:
    call, result = item.call, item.result
    head = f"calling <code>{_esc(call.name)}</code> <code>{_esc(call.arguments_text())}</code>"
    if result is not None and result.is_error:
        head += ' <strong style="color:#c0392b">error</strong>'
    line = f'<div style="{_ACTIVITY}">{head}</div>'
    if result is None:
        return line
    return f'{line}\n<pre style="{_PRE}">{_esc(_shown(result))}</pre>'


def card_markdown(card: TurnCard) -> str:
    """The card as Markdown; the model's and tools' text cannot become HTML in it."""
    blocks = [_call_markdown(item) for item in card.calls]
    if card.answer:
        blocks.append(_answer_markdown(card.answer))
    footer = _footer(card)
    if footer:
        blocks.append(f"*{_md_escape(footer)}*")
    return "\n\n".join(blocks) + "\n"


def _call_markdown(item: CardCall) -> str:
    call, result = item.call, item.result
    head = f"calling {_code_span(call.name)} {_code_span(call.arguments_text())}"
    if result is not None and result.is_error:
        head += " **error**"
    if result is None:
        return head
    return f"{head}\n\n{_fenced(_shown(result))}"


def _footer(card: TurnCard) -> str:
    parts = []
    if card.working:
        parts.append("working…")
    usage = card.usage
    if usage is not None and usage.total:
        parts.append(f"{usage.total:,} tokens ({usage.prompt:,} in, {usage.completion:,} out)")
    if usage is not None and usage.cost is not None:
        parts.append(f"cost {usage.cost:.6g}")
    if card.stop:
        parts.append(f"stopped: {card.stop}")
    return " · ".join(parts)


def _shown(result: ToolMessage) -> str:
    text = result.text
    if len(text) <= RESULT_SHOWN:
        return text
    return f"{text[:RESULT_SHOWN]}… ({len(text) - RESULT_SHOWN:,} more characters)"


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _md_escape(text: str) -> str:
    """Plain text that Markdown shows as it is: its markup characters escaped."""
    return re.sub(r"([\\`*_\[\]<>&#|~])", r"\\\1", text)


def _code_span(text: str) -> str:
    """``text`` as one inline code span (HTML in it stays text), however many backticks it has."""
    flat = " ".join(text.split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def _fenced(text: str) -> str:
    """``text`` as a fenced code block longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _answer_markdown(answer: str) -> str:
    """The answer as the Markdown it is, with any HTML in it shown as text.

    Code blocks are kept as they are (their text is never HTML); outside
    them ``&`` and ``<`` become entities. A block left open is closed, so
    the rest of the card stays out of it.
    """
    lines = []
    fence: str | None = None
    for line in answer.split("\n"):
        opened = _FENCE.match(line)
        if fence is None:
            if opened:
                fence = opened.group(1)
                lines.append(line)
            else:
                lines.append(line.replace("&", "&amp;").replace("<", "&lt;"))
            continue
        lines.append(line)
        if opened and opened.group(1).startswith(fence) and not line.strip().strip(fence[0]):
            fence = None
    if fence is not None:
        lines.append(fence)
    return "\n".join(lines)
