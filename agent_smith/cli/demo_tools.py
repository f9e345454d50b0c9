"""The built-in tools of the demo CLI: a calculator and a sandboxed file reader and writer.

``calculator`` evaluates arithmetic with a hand-written shunting-yard parser
(``+ - * / ^``, parentheses, unary minus, decimals) and never calls ``eval``.
``read_local_file`` reads text files below one sandbox directory: absolute
paths, ``..`` components and symlinks that resolve outside the sandbox are
refused before anything is opened, and what is read is size-capped.
``write_local_file`` writes a text file below the same sandbox under the
same rules (the folder must exist; a symlink or non-file is never written
through) and is marked ``requires_approval``: the CLI asks before each call.

All report bad input by raising :class:`~agent_smith.errors.ToolError`, which
the agent loop turns into an error tool message for the model. Written for
the small default local model (measured with scripts/measure_local_tools.py):
no description holds an example value, which the model copied into its
calls instead of the user's (a path ``notes/todo.txt``, an expression), and
the schemas allow arguments they do not name, which the tools ignore (the
model often adds a ``content`` key to its calls; refusing them failed calls
whose real arguments were right).
"""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath

from .._internal.text import utf8_prefix
from ..errors import ConfigError, ToolError
from ..tools.base import JsonObject, Tool, ToolContext, ToolOptions, ToolResult, ToolSchema

#: Longest expression the calculator accepts; keeps a hostile input cheap.
MAX_EXPRESSION_CHARS = 1000
#: Default cap on what read_local_file returns, in bytes.
DEFAULT_MAX_FILE_BYTES = 64 * 1024

_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|(.))")


@dataclass(frozen=True)
class _Op:
    precedence: int
    right_assoc: bool
    arity: int


# Unary minus binds looser than ^ (so -2^2 == -4) and tighter than * and /.
_OPS: dict[str, _Op] = {
    "+": _Op(1, False, 2),
    "-": _Op(1, False, 2),
    "*": _Op(2, False, 2),
    "/": _Op(2, False, 2),
    "neg": _Op(3, True, 1),
    "pos": _Op(3, True, 1),
    "^": _Op(4, True, 2),
}


def evaluate(expression: str) -> float:
    """Evaluate an arithmetic expression; ToolError on anything malformed.

    Grammar: numbers (``3``, ``2.5``, ``.5``), ``+ - * /``, ``^`` (power,
    right-associative), parentheses, unary ``-``/``+``.
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise _calc_error(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    return _run_rpn(_to_rpn(expression))


def _calc_error(message: str) -> ToolError:
    return ToolError(message, tool_name="calculator")


def _to_rpn(expression: str) -> list[float | str]:
    """Shunting-yard: infix tokens to reverse Polish notation."""
    output: list[float | str] = []
    stack: list[str] = []
    expect_operand = True  # at the start, after an operator or "(": a prefix position
    for match in _TOKEN.finditer(expression.rstrip()):
        number, symbol = match.groups()
        if number is not None:
            if not expect_operand:
                raise _calc_error(f"missing operator before {number!r}")
            output.append(float(number))
            expect_operand = False
        elif symbol == "(":
            if not expect_operand:
                raise _calc_error("missing operator before '('")
            stack.append("(")
        elif symbol == ")":
            if expect_operand:
                raise _calc_error("unexpected ')'")
            while stack and stack[-1] != "(":
                output.append(stack.pop())
            if not stack:
                raise _calc_error("unbalanced ')'")
            stack.pop()
        elif symbol in _OPS and expect_operand:
            if symbol not in "+-":
                raise _calc_error(f"operator {symbol!r} needs a left operand")
            # A prefix operator has no left operand, so it pops nothing.
            stack.append("neg" if symbol == "-" else "pos")
        elif symbol in _OPS:
            op = _OPS[symbol]
            while stack and stack[-1] != "(":
                top = _OPS[stack[-1]]
                if top.precedence > op.precedence or (
                    top.precedence == op.precedence and not op.right_assoc
                ):
                    output.append(stack.pop())
                else:
                    break
            stack.append(symbol)
            expect_operand = True
        else:
            raise _calc_error(f"unexpected character {symbol!r}")
    if expect_operand:
        raise _calc_error("expression is empty or ends with an operator")
    while stack:
        leftover = stack.pop()
        if leftover == "(":
            raise _calc_error("unbalanced '('")
        output.append(leftover)
    return output


def _run_rpn(rpn: list[float | str]) -> float:
    values: list[float] = []
    for item in rpn:
        if isinstance(item, float):
            values.append(item)
            continue
        if _OPS[item].arity == 1:
            operand = values.pop()
            values.append(-operand if item == "neg" else operand)
            continue
        right = values.pop()
        left = values.pop()
        values.append(_apply(item, left, right))
    (result,) = values
    return result


def _apply(op: str, left: float, right: float) -> float:
    try:
        if op == "+":
            result = left + right
        elif op == "-":
            result = left - right
        elif op == "*":
            result = left * right
        elif op == "/":
            if right == 0:
                raise _calc_error("division by zero")
            result = left / right
        else:
            if left == 0 and right < 0:
                raise _calc_error("zero raised to a negative power")
            raw: object = left**right
            if not isinstance(raw, float):  # a negative base with a fractional power is complex
                raise _calc_error(f"{left:g}^{right:g} is not a real number")
            result = raw
    except OverflowError as err:
        raise _calc_error("result too large") from err
    if not math.isfinite(result):
        raise _calc_error("result too large")
    return result


def format_number(value: float) -> str:
    """Shortest faithful text for a result: ``14`` rather than ``14.0``."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}"


class CalculatorTool(Tool):
    """``calculator(expression)``: evaluate arithmetic without ``eval``."""

    _SCHEMA = ToolSchema(
        name="calculator",
        description=(
            "Evaluate an arithmetic expression with + - * / ^ (power), parentheses, "
            "unary minus and decimal numbers. Use it for any calculation instead of "
            "working it out yourself."
        ),
        parameters={
            "type": "object",
            "properties": {
                "expression": {"type": "string", "description": "The expression to evaluate."}
            },
            "required": ["expression"],
        },
    )

    @property
    def schema(self) -> ToolSchema:
        return self._SCHEMA

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        expression = args.get("expression")
        if not isinstance(expression, str):
            raise _calc_error("'expression' must be a string")
        value = evaluate(expression)
        return ToolResult(format_number(value), structured={"result": value})


class _SandboxedFileTool(Tool):
    """A tool working on files below one sandbox directory (the checks both file tools share)."""

    def __init__(self, sandbox: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_FILE_BYTES):
        root = Path(sandbox)
        if not root.is_dir():
            raise ConfigError(f"{self.name} sandbox {str(root)!r} is not a directory")
        if max_bytes <= 0:
            raise ConfigError(f"{self.name} max_bytes must be positive")
        self.sandbox = root.resolve()
        self.max_bytes = max_bytes

    def _error(self, message: str) -> ToolError:
        return ToolError(message, tool_name=self.name)

    def _relative(self, path: str) -> PurePath:
        """``path`` as a sandbox-relative path; ToolError if it is absolute or has ``..``."""
        if not path or "\0" in path:
            raise self._error("path is empty or contains a NUL byte")
        relative = PurePath(path)
        if relative.is_absolute() or relative.drive or path.startswith(("/", "\\")):
            raise self._error(f"absolute paths are refused ({path!r}); give a sandbox path")
        if ".." in relative.parts or ".." in path.replace("\\", "/").split("/"):
            raise self._error(f"'..' is refused in paths ({path!r})")
        return relative

    def _inside(self, real: Path, path: str) -> Path:
        """``real`` if it is the sandbox or below it; ToolError if ``path`` led elsewhere."""
        if real != self.sandbox and self.sandbox not in real.parents:
            raise self._error(f"{path!r} leads outside the sandbox and is refused")
        return real


class ReadLocalFileTool(_SandboxedFileTool):
    """``read_local_file(path)``: read a text file below the sandbox directory."""

    _SCHEMA = ToolSchema(
        name="read_local_file",
        description=(
            "Read a text file from the local sandbox directory. Call it whenever the "
            "user mentions a file: you cannot know what a file says without reading it. "
            "Give the file's path exactly as the user wrote it, relative to the sandbox."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the sandbox."}
            },
            "required": ["path"],
        },
    )

    @property
    def schema(self) -> ToolSchema:
        return self._SCHEMA

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        path = args.get("path")
        if not isinstance(path, str):
            raise self._error("'path' must be a string")
        return ToolResult(self.read(path))

    def resolve(self, path: str) -> Path:
        """The real path of ``path`` inside the sandbox; ToolError if it would escape."""
        relative = self._relative(path)
        try:
            # strict: every symlink on the way is followed, so the containment
            # check below sees where the path really leads.
            real = (self.sandbox / relative).resolve(strict=True)
        except FileNotFoundError as err:
            raise self._error(f"no such file in the sandbox: {path!r}") from err
        except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop
            raise self._error(f"cannot resolve {path!r}: {err}") from err
        return self._inside(real, path)

    def read(self, path: str) -> str:
        """Text of a sandboxed file, at most ``max_bytes`` of it (with a marker when cut)."""
        real = self.resolve(path)
        # O_NOFOLLOW: a symlink swapped in after resolve() is not followed;
        # O_NONBLOCK: opening a FIFO does not hang (it is refused just below).
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(real, flags)
        except OSError as err:
            raise self._error(f"cannot open {path!r}: {err.strerror}") from err
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise self._error(f"{path!r} is not a regular file")
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(self.max_bytes + 1)
        if b"\0" in data:
            raise self._error(f"{path!r} looks like a binary file")
        # Cut on a character boundary so a split character does not become "\ufffd".
        text = utf8_prefix(data, self.max_bytes).decode("utf-8", errors="replace")
        if info.st_size > self.max_bytes:
            text += f"\n…[truncated: showing {self.max_bytes} of {info.st_size} bytes]"
        return text


class WriteLocalFileTool(_SandboxedFileTool):
    """``write_local_file(path, content)``: write a text file below the sandbox; needs approval."""

    _SCHEMA = ToolSchema(
        name="write_local_file",
        description=(
            "Write (create or replace) a UTF-8 text file in the local sandbox directory. "
            "Give a path relative to the sandbox; the folder must exist."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the sandbox."},
                "content": {"type": "string", "description": "The whole text of the file."},
            },
            "required": ["path", "content"],
        },
    )
    _OPTIONS = ToolOptions(requires_approval=True)

    @property
    def schema(self) -> ToolSchema:
        return self._SCHEMA

    @property
    def options(self) -> ToolOptions:
        return self._OPTIONS

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        path, content = args.get("path"), args.get("content")
        if not isinstance(path, str) or not isinstance(content, str):
            raise self._error("'path' and 'content' must be strings")
        return ToolResult(self.write(path, content))

    def write(self, path: str, content: str) -> str:
        """Write ``content`` to the sandboxed ``path``; say what was written."""
        relative = self._relative(path)
        data = content.encode("utf-8")
        if len(data) > self.max_bytes:
            raise self._error(f"content is {len(data)} bytes, over the {self.max_bytes}-byte cap")
        try:
            folder = self._inside((self.sandbox / relative).parent.resolve(strict=True), path)
        except FileNotFoundError as err:
            raise self._error(f"no such folder in the sandbox for {path!r}") from err
        except (OSError, RuntimeError) as err:
            raise self._error(f"cannot resolve {path!r}: {err}") from err
        target = folder / relative.name
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise self._error(f"{path!r} is not a regular file and is not written")
        # O_NOFOLLOW: a symlink swapped in after the check is not written through.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(target, flags, 0o644)
        except OSError as err:
            raise self._error(f"cannot write {path!r}: {err.strerror}") from err
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return f"wrote {len(data)} bytes to {path}"


def demo_tools(sandbox: str | os.PathLike[str]) -> list[Tool]:
    """The demo CLI's built-in tools, reading and (after approval) writing below ``sandbox``."""
    return [CalculatorTool(), ReadLocalFileTool(sandbox), WriteLocalFileTool(sandbox)]
