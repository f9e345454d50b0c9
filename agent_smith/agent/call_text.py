"""Which parts of a reply's text are tool calls written as text: the one filter of visible text.

Small models often write a call instead of making it: measured on
Qwen2.5-Coder-0.5B under llama.cpp, ``{"name": "calculator", "arguments":
{...}}`` bare, in a ```` ```json ```` fence, or between ``<tool_call>`` and
``</tool_call>``; repeated ten times; followed by the result it imagines;
cut off by the token cap. None of that is for the user to read.
:class:`CallText` reads a reply's text piece by piece, as it streams, and
splits it into what the user may see and the calls it hides:

* a *unit* starts at the start of the text or of a line (after spaces): a
  JSON object, bare, fenced (```` ``` ```` or ```` ```json ````) or tagged;
* a unit whose object has exactly the keys ``name`` (a string) and
  ``arguments`` (an object) is a *written call*: it is hidden, and its
  ``(name, arguments)`` kept once (a repeated copy is hidden and not kept
  again);
* while the text since a line's start may still grow into a written call
  (:func:`could_be_call`: ``{``, ``{"name": "calc``, a fence's opening...),
  it is held; it is shown the moment it cannot (``{"city": "Paris"}``, a
  ```` ```python ```` fence, any prose);
* at the end, text still held is a call cut off by the token cap (hidden:
  :attr:`CallText.cut`) unless it may be shown.

Everything else is shown, in order, exactly once: :meth:`CallText.feed`
returns what may be shown now and :meth:`CallText.end` the rest, so the text
shown while streaming is the text the reply is recorded with
(:func:`read_call_text`). Only text from a line's start can be held, so an
answer never begins in the middle of a hidden call's line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_OPEN_TAG, _CLOSE_TAG, _FENCE = "<tool_call>", "</tool_call>", "```"
#: How a unit begins (once its leading space is gone).
_CALL_STARTS = ("{", _FENCE, _OPEN_TAG)
_SPACE = re.compile(r"\s*")
_LINE_SPACE = re.compile(r"[ \t]*")
_KEYS = frozenset({"name", "arguments"})
_KEY_NAMES = ("name", "arguments")
_decoder = json.JSONDecoder()

#: A written call: the tool's name and its arguments.
WrittenCall = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class CallTextReading:
    """A whole reply's text read by :class:`CallText`: what is shown and what was hidden."""

    visible: str
    calls: tuple[WrittenCall, ...]
    hidden: bool  # some text was a written call (whole or cut off)
    cut: bool  # the text ended inside a written call

    @property
    def starts_with_call(self) -> bool:
        """Did the reply begin with a written call (nothing shown before it)?"""
        return self.hidden and not self.visible.strip()


class CallText:
    """One reply's text, split as it streams into visible text and written calls."""

    __slots__ = (
        "_after_call",
        "_at_line_start",
        "_pos",
        "_seen",
        "_text",
        "calls",
        "cut",
        "hidden",
    )

    def __init__(self) -> None:
        self._text = ""
        self._pos = 0  # the text before this is shown or hidden
        self._at_line_start = True
        self._after_call = False  # the text at _pos follows a hidden call
        self._seen: set[str] = set()
        self.calls: list[WrittenCall] = []
        self.hidden = False
        self.cut = False

    @property
    def holding(self) -> bool:
        """Is some text held back (a possible call being written)?"""
        return self._pos < len(self._text)

    def feed(self, piece: str) -> str:
        """Add a piece of the reply; the text that may be shown now."""
        self._text += piece
        return self._advance(final=False)

    def end(self) -> str:
        """The reply is complete: the rest that may be shown (a cut-off call stays hidden)."""
        return self._advance(final=True)

    def _advance(self, *, final: bool) -> str:
        text, shown = self._text, []
        while self._pos < len(text):
            pos = self._pos
            if not self._at_line_start:
                newline = text.find("\n", pos)
                stop = len(text) if newline < 0 else newline + 1
                shown.append(text[pos:stop])
                self._pos = stop
                self._at_line_start = newline >= 0
                continue
            space = _SPACE if self._after_call else _LINE_SPACE
            start = space.match(text, pos).end()  # type: ignore[union-attr]
            rest = text[start:]
            if not rest:  # only spaces so far: they belong to what comes next
                if final and not self._after_call:
                    shown.append(text[pos:])
                self._pos = len(text) if final else self._pos
                break
            if self._after_call:  # the space after a hidden call is hidden with it
                self._pos, pos, self._after_call = start, start, False
            unit = _unit_at(text, start)
            if unit is not None:
                call, end = unit
                if call is None:  # JSON, not a call: shown
                    self._at_line_start = False
                    continue
                self._hide(call)
                # What follows a hidden call starts afresh, as if on a line of its own.
                self._pos, self._after_call = end, True
                continue
            if rest[0] == "\n":
                shown.append(text[pos : start + 1])
                self._pos = start + 1
                continue
            if could_be_call(rest):
                if not final:
                    break
                if "{" in rest:  # an object was begun: a call cut off
                    self.hidden = self.cut = True
                    self._pos = len(text)
                    break
            self._at_line_start = False
        return "".join(shown)

    def _hide(self, call: WrittenCall) -> None:
        self.hidden = True
        key = json.dumps(call, sort_keys=True, default=str)
        if key not in self._seen:  # a repeated copy runs once
            self._seen.add(key)
            self.calls.append(call)


def read_call_text(text: str) -> CallTextReading:
    """``text`` read whole, as :class:`CallText` reads it streamed."""
    if "{" not in text:  # the common case, prose: no object, so no call
        return CallTextReading(text, (), hidden=False, cut=False)
    reader = CallText()
    visible = reader.feed(text) + reader.end()
    return CallTextReading(visible, tuple(reader.calls), reader.hidden, reader.cut)


def starts_like_a_call(text: str) -> bool | None:
    """True if ``text`` begins like a written call, False if it cannot, None if too short to say."""
    head = text.lstrip()
    if any(head.startswith(start) for start in _CALL_STARTS):
        return True
    if any(start.startswith(head) for start in _CALL_STARTS):
        return None  # "", "`", "<tool" ...
    return False


def could_be_call(text: str) -> bool:
    """False once ``text`` cannot be the beginning of a written call.

    True while it is (or may grow into) a unit opener, ``{``, the key
    ``"name"`` with a string value followed by the key ``"arguments"``, or
    the key ``"arguments"`` first (whose object may hold anything). Measured
    on Qwen2.5-Coder-0.5B: typed output with a ``name`` field came as
    ``{"name": "read_file", "country": "France"}``; the next key shows it is
    no call.
    """
    pos = _skip_space(text, 0)
    rest = text[pos:]
    if rest.startswith(_OPEN_TAG):
        pos += len(_OPEN_TAG)
    elif rest.startswith(_FENCE):
        pos += len(_FENCE)
        language = text[pos : pos + 4].lower()
        if language == "json":
            pos += 4
        elif pos + len(language) == len(text) and "json".startswith(language):
            return True  # "```js", say: the language is still arriving
    elif _OPEN_TAG.startswith(rest) or _FENCE.startswith(rest):
        return True
    found = _string_after(text, pos, "{")
    if isinstance(found, bool):
        return found
    key, pos = found
    if pos < 0:
        return any(known.startswith(key) for known in _KEY_NAMES)
    if key != "name":
        return key == "arguments"
    found = _string_after(text, pos, ":")
    if isinstance(found, bool):
        return found
    _, pos = found
    if pos < 0:
        return True  # the name is still arriving
    found = _string_after(text, pos, ",")  # "}": a name alone is no call
    if isinstance(found, bool):
        return found
    key, pos = found
    return "arguments".startswith(key) if pos < 0 else key == "arguments"


def _unit_at(text: str, pos: int) -> tuple[WrittenCall | None, int] | None:
    """The written call whose unit starts at ``pos`` (None: a whole unit, no call) and its end.

    None when no whole unit starts there (yet).
    """
    if text.startswith(_OPEN_TAG, pos):
        inner_start = pos + len(_OPEN_TAG)
        close = text.find(_CLOSE_TAG, inner_start)
        closing = len(_CLOSE_TAG)
    elif text.startswith(_FENCE, pos):
        inner_start = pos + len(_FENCE)
        if text[inner_start : inner_start + 4].lower() == "json":
            inner_start += 4
        close = text.find(_FENCE, inner_start)
        closing = len(_FENCE)
    else:
        found = _object_at(text, pos)
        if found is None:
            return None
        call = _as_call(found[0])
        return call, found[1]
    if close < 0:
        return None
    inner = text[inner_start:close].strip()
    found = _object_at(inner, 0)
    if found is None or found[1] != len(inner):
        return None, close + closing  # a unit holds exactly one object
    call = _as_call(found[0])
    return call, close + closing


def _as_call(obj: dict[str, Any]) -> WrittenCall | None:
    name, arguments = obj.get("name"), obj.get("arguments")
    if obj.keys() != _KEYS or not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    return name, arguments


def _skip_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def _string_at(text: str, pos: int) -> tuple[str | None, int]:
    """The JSON string (unescaped chars only) at ``pos`` and where it ends (-1: unfinished).

    ``(None, pos)`` when no string starts at ``pos``.
    """
    if not text.startswith('"', pos):
        return None, pos
    end = text.find('"', pos + 1)
    if end < 0:
        return text[pos + 1 :], -1
    return text[pos + 1 : end], end + 1


def _string_after(text: str, pos: int, mark: str) -> tuple[str, int] | bool:
    """The string after ``mark`` at ``pos`` (spaces around it allowed), as :func:`_string_at`.

    Or, where none stands there, whether ``text`` may still grow into one:
    True if it ends first, False if something else comes.
    """
    pos = _skip_space(text, pos)
    if pos == len(text):
        return True
    if text[pos] != mark:
        return False
    string, pos = _string_at(text, _skip_space(text, pos + 1))
    if string is None:
        return pos == len(text)
    return string, pos


def _object_at(text: str, pos: int) -> tuple[dict[str, Any], int] | None:
    """The JSON object starting at ``pos`` and where it ends, or None."""
    if not text.startswith("{", pos):
        return None
    try:
        value, end = _decoder.raw_decode(text, pos)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return None
    return (value, end) if isinstance(value, dict) else None
