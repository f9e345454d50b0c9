"""The built-in tools of the demo CLI: a calculator, and the files, search and shell toolkits.

``calculator`` evaluates arithmetic with a hand-written shunting-yard parser
(``+ - * / ^``, parentheses, unary minus, decimals) and never calls ``eval``,
and reports bad input by raising :class:`~agent_smith.errors.ToolError`,
which the agent loop turns into an error tool message for the model. Its
description holds no example value: the small default local model copied
examples into its calls instead of the user's expression (measured,
docs/llama.md). The file, search and shell tools are
:mod:`agent_smith.toolkits`, confined to the sandbox folder
(:func:`demo_tools`).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from ..errors import ToolError
from ..toolkits import (
    FilesPolicy,
    FilesToolkit,
    SearchPolicy,
    SearchToolkit,
    ShellPolicy,
    ShellToolkit,
    WorkspaceChanges,
)
from ..toolkits.shell import DEFAULT_ENV
from ..tools.base import JsonObject, Said, Tool, ToolContext, ToolResult, ToolSchema

#: Longest expression the calculator accepts; keeps a hostile input cheap.
MAX_EXPRESSION_CHARS = 1000

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
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
            "Evaluate an arithmetic expression with + - * / ^ (power) and parentheses. "
            "It takes unary minus and decimal numbers. Use it for any calculation instead "
            "of working it out yourself."
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

    def ungrounded(self, args: JsonObject, said: Said) -> str | None:
        """An expression with no number of the conversation's was made up (measured on the
        0.5B: "What is the capital of Japan?" went to ``calculator("100 + 200")``)."""
        expression = args.get("expression")
        if not isinstance(expression, str) or numbers(expression) & numbers(said.text):
            return None
        return f"{expression!r} holds no number of the conversation"


def numbers(text: str) -> set[float]:
    """The numbers written in ``text`` (``1,234.50`` is 1234.5)."""
    return {float(n) for n in _NUMBER.findall(_THOUSANDS.sub("", text))}


#: The tools a small model is offered (without ``--all-tools``): the few it uses well.
SMALL_MODEL_TOOLS = ("calculator", "read_file", "list_files")


def demo_tools(sandbox: str | os.PathLike[str], *, few: bool = False) -> list[Tool]:
    """The demo CLI's built-in tools: the calculator, and the toolkits on ``sandbox``.

    Files (writes and edits ask first), search, and the shell (read-only
    commands run free; writes, destructive commands and anything reaching
    outside the sandbox ask first). The shell sees the user's ``PATH`` and
    ``LANG``, nothing else of the environment. ``few``: only
    :data:`SMALL_MODEL_TOOLS`, for a small model (measured on
    Qwen2.5-Coder-0.5B: a dozen tools with long schemas make every request
    slower to read and give it more names to confuse).
    """
    if few:
        return [t for t in demo_tools(sandbox) if t.name in SMALL_MODEL_TOOLS]
    env = {name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ}
    changes = WorkspaceChanges()  # search sees what files and shell wrote, at once
    return [
        CalculatorTool(),
        *FilesToolkit(FilesPolicy(root=sandbox, approve_writes=True), changes=changes).tools(),
        *SearchToolkit(SearchPolicy(root=sandbox), changes=changes).tools(),
        *ShellToolkit(
            ShellPolicy(root=sandbox, env=env or DEFAULT_ENV, approve_writes=True),
            changes=changes,
        ).tools(),
    ]
