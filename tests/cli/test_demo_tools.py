"""The demo CLI's built-in tools: the calculator and the sandboxed file reader and writer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_smith import ConfigError, Runtime, ToolContext, ToolError
from agent_smith.cli.demo_tools import (
    CalculatorTool,
    ReadLocalFileTool,
    WriteLocalFileTool,
    demo_tools,
    evaluate,
    format_number,
)
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


# --- read_local_file -------------------------------------------------------


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A sandbox with a few files, and a secret file next to (outside) it."""
    sandbox = tmp_path / "sandbox"
    (sandbox / "notes").mkdir(parents=True)
    (sandbox / "hello.txt").write_text("hello from the sandbox\n", encoding="utf-8")
    (sandbox / "notes" / "todo.txt").write_text("buy milk\n", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n", encoding="utf-8")
    return sandbox, secret


def test_read_local_file_reads_files_below_the_sandbox(
    layout: tuple[Path, Path], ctx: ToolContext
) -> None:
    sandbox, _ = layout
    reader = ReadLocalFileTool(sandbox)
    assert reader.invoke({"path": "hello.txt"}, ctx).content == "hello from the sandbox\n"
    assert reader.read("notes/todo.txt") == "buy milk\n"
    assert reader.read("./notes/./todo.txt") == "buy milk\n"


def test_read_local_file_refuses_dotdot(layout: tuple[Path, Path]) -> None:
    sandbox, _ = layout
    reader = ReadLocalFileTool(sandbox)
    for path in ("../secret.txt", "notes/../../secret.txt", "notes/../hello.txt", ".."):
        with pytest.raises(ToolError, match=r"'\.\.' is refused"):
            reader.read(path)


def test_read_local_file_refuses_absolute_paths(layout: tuple[Path, Path]) -> None:
    sandbox, secret = layout
    reader = ReadLocalFileTool(sandbox)
    for path in (str(secret), str(sandbox / "hello.txt"), "/etc/passwd"):
        with pytest.raises(ToolError, match="absolute paths are refused"):
            reader.read(path)


def test_read_local_file_refuses_a_symlink_leading_out(layout: tuple[Path, Path]) -> None:
    sandbox, secret = layout
    (sandbox / "innocent.txt").symlink_to(secret)
    (sandbox / "outside").symlink_to(secret.parent, target_is_directory=True)
    reader = ReadLocalFileTool(sandbox)
    for path in ("innocent.txt", "outside/secret.txt"):
        with pytest.raises(ToolError, match="leads outside the sandbox"):
            reader.read(path)


def test_read_local_file_follows_a_symlink_that_stays_inside(layout: tuple[Path, Path]) -> None:
    sandbox, _ = layout
    (sandbox / "alias.txt").symlink_to(sandbox / "notes" / "todo.txt")
    assert ReadLocalFileTool(sandbox).read("alias.txt") == "buy milk\n"


def test_read_local_file_works_when_the_sandbox_itself_is_a_symlink(
    layout: tuple[Path, Path],
) -> None:
    sandbox, _ = layout
    link = sandbox.parent / "link-to-sandbox"
    link.symlink_to(sandbox, target_is_directory=True)
    assert ReadLocalFileTool(link).read("hello.txt") == "hello from the sandbox\n"


def test_read_local_file_reports_missing_files_directories_and_binaries(
    layout: tuple[Path, Path],
) -> None:
    sandbox, _ = layout
    (sandbox / "blob.bin").write_bytes(b"\x00\x01\x02")
    reader = ReadLocalFileTool(sandbox)
    with pytest.raises(ToolError, match="no such file"):
        reader.read("missing.txt")
    with pytest.raises(ToolError, match="not a regular file"):
        reader.read("notes")
    with pytest.raises(ToolError, match="binary"):
        reader.read("blob.bin")
    with pytest.raises(ToolError, match="empty"):
        reader.read("")


def test_read_local_file_caps_what_it_returns(layout: tuple[Path, Path]) -> None:
    sandbox, _ = layout
    (sandbox / "big.txt").write_text("x" * 1000, encoding="utf-8")
    text = ReadLocalFileTool(sandbox, max_bytes=100).read("big.txt")
    assert text.startswith("x" * 100 + "\n")
    assert "truncated: showing 100 of 1000 bytes" in text


def test_read_local_file_cuts_on_a_character_boundary(layout: tuple[Path, Path]) -> None:
    sandbox, _ = layout
    (sandbox / "accents.txt").write_text("é" * 60, encoding="utf-8")  # 120 bytes
    text = ReadLocalFileTool(sandbox, max_bytes=101).read("accents.txt")
    assert text.startswith("é" * 50 + "\n")
    assert "\ufffd" not in text


def test_read_local_file_needs_an_existing_sandbox_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        ReadLocalFileTool(tmp_path / "missing")


def test_read_local_file_refuses_a_fifo_without_blocking(layout: tuple[Path, Path]) -> None:
    sandbox, _ = layout
    os.mkfifo(sandbox / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        ReadLocalFileTool(sandbox).read("pipe")


# --- write_local_file ------------------------------------------------------


def test_write_local_file_writes_below_the_sandbox_and_needs_approval(
    layout: tuple[Path, Path], ctx: ToolContext
) -> None:
    sandbox, _ = layout
    writer = WriteLocalFileTool(sandbox)
    assert writer.options.requires_approval is True
    result = writer.invoke({"path": "notes/new.txt", "content": "héllo"}, ctx)
    assert result.content == "wrote 6 bytes to notes/new.txt"
    assert (sandbox / "notes" / "new.txt").read_text(encoding="utf-8") == "héllo"
    writer.write("hello.txt", "replaced")
    assert (sandbox / "hello.txt").read_text(encoding="utf-8") == "replaced"


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("../out.txt", "'..' is refused"),
        ("/tmp/out.txt", "absolute paths are refused"),
        ("missing/out.txt", "no such folder"),
        ("notes", "not a regular file"),
        ("", "empty"),
    ],
)
def test_write_local_file_refuses_paths_it_must_not_write(
    layout: tuple[Path, Path], path: str, fragment: str
) -> None:
    sandbox, _ = layout
    with pytest.raises(ToolError, match=fragment) as caught:
        WriteLocalFileTool(sandbox).write(path, "x")
    assert caught.value.tool_name == "write_local_file"


def test_write_local_file_never_writes_through_a_symlink(layout: tuple[Path, Path]) -> None:
    sandbox, secret = layout
    (sandbox / "link.txt").symlink_to(secret)
    (sandbox / "out").symlink_to(secret.parent, target_is_directory=True)
    writer = WriteLocalFileTool(sandbox)
    with pytest.raises(ToolError, match="not a regular file"):
        writer.write("link.txt", "overwritten")
    with pytest.raises(ToolError, match="leads outside the sandbox"):
        writer.write("out/secret.txt", "overwritten")
    assert secret.read_text(encoding="utf-8") == "top secret\n"


def test_write_local_file_caps_what_it_writes(layout: tuple[Path, Path]) -> None:
    sandbox, _ = layout
    with pytest.raises(ToolError, match="over the 4-byte cap"):
        WriteLocalFileTool(sandbox, max_bytes=4).write("big.txt", "12345")
    assert not (sandbox / "big.txt").exists()


def test_demo_tools_are_the_calculator_the_reader_and_the_writer(tmp_path: Path) -> None:
    names = [t.name for t in demo_tools(tmp_path)]
    assert names == ["calculator", "read_local_file", "write_local_file"]


def test_the_demo_tools_take_a_call_with_an_argument_they_do_not_name(
    layout: tuple[Path, Path], ctx: ToolContext
) -> None:
    """A small model adds keys such as "content" to its calls; the real arguments still count."""
    sandbox, _ = layout
    calculator, reader, _ = demo_tools(sandbox)
    extra = {"content": "The whole text of the file."}
    assert validation_error(reader.schema.parameters, {"path": "hello.txt", **extra}) is None
    assert reader.invoke({"path": "hello.txt", **extra}, ctx).content == "hello from the sandbox\n"
    assert validation_error(calculator.schema.parameters, {"expression": "2", **extra}) is None
    assert validation_error(reader.schema.parameters, extra) is not None  # "path" is required
