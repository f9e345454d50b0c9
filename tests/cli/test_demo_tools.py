"""The demo CLI's built-in tools: the calculator and the sandboxed file reader and writer."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_smith import ConfigError, Runtime, ToolContext, ToolError
from agent_smith.cli.demo_tools import (
    CalculatorTool,
    demo_tools,
    evaluate,
    format_number,
    numbers,
)
from agent_smith.tools.base import Said
from agent_smith.tools.validation import validation_error
from tests.support.tools import tool_context


@pytest.fixture
def ctx(runtime: Runtime) -> ToolContext:
    return tool_context(runtime)


# --- calculator ------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 - 3", 3),  # left-associative
        ("100 / 10 / 5", 2),  # left-associative
        ("2 ^ 3 ^ 2", 512),  # right-associative: 2^(3^2)
        ("2 * 3 ^ 2", 18),  # ^ binds tighter than *
        ("-3 + 5", 2),
        ("-2 ^ 2", -4),  # unary minus binds looser than ^
        ("2 ^ -1", 0.5),
        ("(-2) ^ 2", 4),
        ("4 * -(1 + 1)", -8),
        ("--3", 3),
        ("+3", 3),
        ("1.5 * 2", 3),
        (".5 + 2.", 2.5),
        ("0.1 + 0.2", 0.1 + 0.2),
        ("  ((7))  ", 7),
        ("8 ^ (1 / 3)", 2),
    ],
)
def test_calculator_honours_precedence_associativity_unary_minus_and_decimals(
    expression: str, expected: float
) -> None:
    assert evaluate(expression) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("1 / 0", "division by zero"),
        ("1 / (2 - 2)", "division by zero"),
        ("0 ^ -1", "negative power"),
        ("", "empty"),
        ("   ", "empty"),
        ("1 +", "ends with an operator"),
        ("* 2", "left operand"),
        ("(1 + 2", "unbalanced '('"),
        ("1 + 2)", "unbalanced ')'"),
        ("()", "unexpected ')'"),
        ("2 3", "missing operator"),
        ("2 (3)", "missing operator"),
        ("1.2.3", "missing operator"),
        ("__import__('os')", "unexpected character"),
        ("2 ** 3", "left operand"),
        ("1e5", "unexpected character"),
        ("(-8) ^ 0.5", "not a real number"),
        ("10 ^ 400", "too large"),
        ("9" * 400 + " * 10", "too large"),
        ("1" * 1001, "longer than"),
    ],
)
def test_calculator_reports_malformed_input_as_tool_errors(expression: str, fragment: str) -> None:
    with pytest.raises(ToolError) as caught:
        evaluate(expression)
    assert caught.value.tool_name == "calculator"
    assert fragment in str(caught.value)


@given(st.text(alphabet="0123456789.+-*/^() x", max_size=30))
def test_calculator_never_fails_with_anything_but_a_tool_error(expression: str) -> None:
    try:
        value = evaluate(expression)
    except ToolError:
        return
    assert isinstance(value, float)


def test_calculator_tool_returns_text_and_structured_result(ctx: ToolContext) -> None:
    result = CalculatorTool().invoke({"expression": "(2 + 3) * 4"}, ctx)
    assert result.content == "20"
    assert result.structured == {"result": 20.0}
    assert not result.is_error


def test_calculator_tool_raises_tool_error_on_division_by_zero(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="division by zero"):
        CalculatorTool().invoke({"expression": "1/0"}, ctx)


def test_calculator_schema_requires_an_expression_string() -> None:
    schema = CalculatorTool().schema
    assert schema.name == "calculator"
    assert schema.parameters["required"] == ["expression"]
    assert schema.parameters["properties"]["expression"]["type"] == "string"


@pytest.mark.parametrize(
    ("value", "text"), [(14.0, "14"), (-0.0, "0"), (0.5, "0.5"), (1e20, "1e+20")]
)
def test_format_number_drops_a_useless_fraction(value: float, text: str) -> None:
    assert format_number(value) == text


# --- the demo's toolkits -----------------------------------------------------


def test_demo_tools_are_the_calculator_and_the_files_search_and_shell_toolkits(
    tmp_path: Path,
) -> None:
    names = [t.name for t in demo_tools(tmp_path)]
    assert names == [
        "calculator",
        "read_file",
        "list_files",
        "glob_files",
        "write_file",
        "edit_file",
        "grep",
        "search_code",
        "run_command",
    ]


def test_the_demo_asks_before_writes_and_risky_commands_but_not_reads(tmp_path: Path) -> None:
    tools = {t.name: t.options.requires_approval for t in demo_tools(tmp_path)}
    assert tools["write_file"] is True and tools["edit_file"] is True
    assert tools["read_file"] is False and tools["grep"] is False
    shell = tools["run_command"]
    assert callable(shell)
    assert shell({"command": "ls"}) is False
    assert shell({"command": "echo x > notes.txt"}) is True
    assert shell({"command": "rm -rf ."}) is True


def test_the_demo_tools_need_an_existing_sandbox_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        demo_tools(tmp_path / "missing")


def test_the_demo_tools_take_a_call_with_an_argument_they_do_not_name(
    tmp_path: Path, ctx: ToolContext
) -> None:
    """A small model adds keys such as "content" to its calls; the real arguments still count."""
    (tmp_path / "hello.txt").write_text("hello from the sandbox\n", encoding="utf-8")
    calculator, reader, *_ = demo_tools(tmp_path)
    extra = {"content": "The whole text of the file."}
    assert validation_error(reader.schema.parameters, {"path": "hello.txt", **extra}) is None
    assert reader.invoke({"path": "hello.txt", **extra}, ctx).content == "hello from the sandbox\n"
    assert validation_error(calculator.schema.parameters, {"expression": "2", **extra}) is None
    assert validation_error(reader.schema.parameters, extra) is not None  # "path" is required


@pytest.mark.parametrize(
    ("expression", "text", "grounded"),
    [
        ("17 * 23", "What is 17 times 23?", True),
        ("3 * 12.5 + 1.25", "3 books at 12.50 each and a pen for 1.25", True),
        ("391 + 9", "What is 17 times 23?\n391\nAnd what is that plus 9?", True),
        ("1234*5678", "What is 1,234 times 5,678?", True),
        ("100 + 200", "What is the capital of Japan?", False),
        ("Paris", "What is the capital of France?", False),
    ],
)
def test_an_expression_is_grounded_when_it_holds_a_number_of_the_conversation(
    expression: str, text: str, grounded: bool
) -> None:
    said = Said(text, text)
    assert (CalculatorTool().ungrounded({"expression": expression}, said) is None) is grounded


def test_numbers_reads_decimals_and_thousands_separators() -> None:
    assert numbers("3 at 12.50, 1,234 and 7,006,652; 2^10") == {3, 12.5, 1234, 7006652, 2, 10}
