"""@tool / make_tool: schemas from hints and docstrings, invocation, normalisation."""

from __future__ import annotations

import asyncio
import enum
import json
import threading
from dataclasses import dataclass
from typing import Any, Literal, Optional

import pytest

from agent_smith import (
    CancellationSource,
    ConfigError,
    Runtime,
    ToolContext,
    ToolError,
    ToolOptions,
    ToolResult,
    ToolSchema,
)
from agent_smith.tools import FunctionTool, make_tool, tool
from tests.support.tools import tool_context

pytestmark = pytest.mark.usefixtures("no_thread_leak")


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclass
class Point:
    """A point on the plane.

    Args:
        x: Horizontal position.
        y: Vertical position.
    """

    x: int
    y: int = 0


class Opaque:
    """A type with no JSON form."""


def props(t: FunctionTool) -> dict[str, Any]:
    return t.schema.parameters["properties"]


# --- schema generation -------------------------------------------------------


def test_scalar_parameters_map_to_json_types_and_are_required() -> None:
    @tool
    def f(s: str, i: int, x: float, b: bool) -> str:
        """Do things."""
        return ""

    assert props(f) == {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
    }
    assert f.schema.parameters["required"] == ["s", "i", "x", "b"]
    assert f.schema.parameters["type"] == "object"
    assert f.schema.name == "f"
    assert f.schema.description == "Do things."


def test_containers_map_to_arrays_and_objects() -> None:
    @tool
    def f(ids: list[int], meta: dict[str, Any], tags: dict[str, str]) -> None:
        return None

    assert props(f)["ids"] == {"type": "array", "items": {"type": "integer"}}
    assert props(f)["meta"] == {"type": "object", "additionalProperties": True}
    assert props(f)["tags"] == {"type": "object", "additionalProperties": {"type": "string"}}


def test_optional_is_nullable_and_a_default_makes_a_parameter_optional() -> None:
    @tool
    def f(a: Optional[int], b: str = "x", c: int | None = None) -> None:  # noqa: UP045
        return None

    assert props(f)["a"] == {"type": ["integer", "null"]}
    assert props(f)["b"] == {"type": "string", "default": "x"}
    assert props(f)["c"] == {"type": ["integer", "null"], "default": None}
    assert f.schema.parameters["required"] == ["a"]


def test_literal_and_enum_become_enums_of_values() -> None:
    @tool
    def f(mode: Literal["fast", "slow"], colour: Colour = Colour.RED) -> None:
        return None

    assert props(f)["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert props(f)["colour"] == {"type": "string", "enum": ["red", "green"], "default": "red"}


def test_dataclass_parameter_becomes_a_nested_object_schema() -> None:
    @tool
    def f(p: Point) -> None:
        return None

    assert props(f)["p"] == {
        "type": "object",
        "description": "A point on the plane.",
        "properties": {
            "x": {"type": "integer", "description": "Horizontal position."},
            "y": {"type": "integer", "description": "Vertical position.", "default": 0},
        },
        "required": ["x"],
        "additionalProperties": False,
    }


def test_google_docstring_gives_description_and_parameter_descriptions() -> None:
    @tool
    def search(query: str, limit: int = 10) -> list[str]:
        """Search the web for pages.

        Longer explanation that is not part of the description.

        Args:
            query (str): What to look for.
            limit: How many results to return,
                at most 50.

        Returns:
            The page titles.
        """
        return []

    assert search.schema.description == "Search the web for pages."
    assert props(search)["query"]["description"] == "What to look for."
    assert props(search)["limit"]["description"] == "How many results to return, at most 50."


def test_numpy_docstring_gives_parameter_descriptions() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers
        exactly.

        Parameters
        ----------
        a : int
            The first number.
        b : int
            The second
            number.

        Returns
        -------
        int
            The sum.
        """
        return a + b

    assert add.schema.description == "Add two numbers exactly."
    assert props(add)["a"]["description"] == "The first number."
    assert props(add)["b"]["description"] == "The second number."


def test_context_parameter_is_left_out_of_the_schema() -> None:
    @tool
    def f(text: str, ctx: ToolContext) -> str:
        return text

    assert list(props(f)) == ["text"]
    assert f.schema.parameters["required"] == ["text"]


def test_decorator_options_set_name_description_and_timeout() -> None:
    @tool(name="lookup", description="Look it up.", timeout=2.5)
    def f(key: str) -> str:
        """Ignored docstring."""
        return key

    assert f.schema.name == "lookup"
    assert f.schema.description == "Look it up."
    assert f.options == ToolOptions(timeout=2.5)
    assert f("k") == "k"  # still callable as the plain function


def test_explicit_schema_is_used_verbatim() -> None:
    schema = ToolSchema("raw", "Raw tool.", {"type": "object", "properties": {"q": {}}})

    def f(q: object) -> str:
        return "ok"

    assert make_tool(f, schema=schema).schema is schema
    parameters = {"type": "object", "properties": {"q": {"type": "string", "x-custom": 1}}}
    made = make_tool(f, schema=parameters, description="Given.")
    assert made.schema.parameters is parameters
    assert made.schema == ToolSchema("f", "Given.", parameters)


def test_unsupported_annotations_and_bad_options_are_config_errors() -> None:
    def f(x: Opaque) -> None:
        return None

    with pytest.raises(ConfigError, match="'x'"):
        make_tool(f)

    def local(x: Undefined) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    with pytest.raises(ConfigError, match="Undefined"):
        make_tool(local)

    def g(*args: int) -> None:
        return None

    with pytest.raises(ConfigError):
        make_tool(g)
    with pytest.raises(ConfigError):
        make_tool(lambda: None, name="bad name!")
    with pytest.raises(ConfigError):
        make_tool(lambda: None, timeout=0)


# --- invocation ---------------------------------------------------------------


def test_invoke_converts_dataclass_and_enum_arguments(runtime: Runtime) -> None:
    seen: list[Any] = []

    @tool
    def f(p: Point, colour: Colour, scale: float = 1.0) -> str:
        seen.append((p, colour, scale))
        return "done"

    result = f.invoke({"p": {"x": 3}, "colour": "green", "scale": 2}, tool_context(runtime))
    assert result == ToolResult("done")
    assert seen == [(Point(3, 0), Colour.GREEN, 2.0)]
    assert isinstance(seen[0][2], float)


def test_invoke_passes_the_context(runtime: Runtime) -> None:
    @tool
    def f(ctx: ToolContext) -> str:
        return ctx.call_id

    assert f.invoke({}, tool_context(runtime)).content == "call-1"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text", ToolResult("text")),
        (None, ToolResult("")),
        ({"a": [1, "é"]}, ToolResult('{"a": [1, "é"]}', structured={"a": [1, "é"]})),
        ([1, 2], ToolResult("[1, 2]", structured=[1, 2])),
        (42, ToolResult("42", structured=42)),
        (ToolResult("raw", is_error=True), ToolResult("raw", is_error=True)),
        (Point(1, 2), ToolResult('{"x": 1, "y": 2}', structured={"x": 1, "y": 2})),
    ],
)
def test_return_values_are_normalised(runtime: Runtime, value: Any, expected: ToolResult) -> None:
    @tool
    def f() -> Any:
        return value

    assert f.invoke({}, tool_context(runtime)) == expected


def test_raised_exception_becomes_an_error_result_without_traceback(runtime: Runtime) -> None:
    @tool
    def divide(a: int, b: int) -> float:
        return a / b

    result = divide.invoke({"a": 1, "b": 0}, tool_context(runtime))
    assert result.is_error
    assert result.content == "ZeroDivisionError: division by zero"
    assert "Traceback" not in result.content

    @tool
    def fails() -> None:
        raise ToolError("the service is down", tool_name="fails")

    assert fails.invoke({}, tool_context(runtime)) == ToolResult(
        "the service is down", is_error=True
    )


def test_async_tool_runs_on_its_own_loop(runtime: Runtime) -> None:
    @tool
    async def fetch(n: int) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"n": n * 2}

    assert fetch.invoke({"n": 21}, tool_context(runtime)) == ToolResult(
        '{"n": 42}', structured={"n": 42}
    )


def test_async_tool_works_when_the_caller_thread_runs_an_event_loop(runtime: Runtime) -> None:
    @tool
    async def fetch(n: int) -> int:
        await asyncio.sleep(0)
        return n + 1

    async def notebook_cell() -> ToolResult:
        # A blocking call from inside a running loop, as in Jupyter.
        return fetch.invoke({"n": 1}, tool_context(runtime))

    assert asyncio.run(notebook_cell()) == ToolResult("2", structured=2)


def test_async_tool_is_cancelled_through_its_token(runtime: Runtime) -> None:
    started = threading.Event()

    @tool
    async def forever() -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    source = CancellationSource()
    box: list[ToolResult] = []
    worker = threading.Thread(
        target=lambda: box.append(forever.invoke({}, tool_context(runtime, cancel=source)))
    )
    worker.start()
    assert started.wait(10)
    source.cancel()
    worker.join(10)
    assert box == [ToolResult("cancelled", is_error=True)]


def test_async_tool_exception_becomes_an_error_result(runtime: Runtime) -> None:
    @tool
    async def broken() -> None:
        raise ValueError("bad input")

    assert broken.invoke({}, tool_context(runtime)) == ToolResult(
        "ValueError: bad input", is_error=True
    )


def test_schema_serialises_to_openai_function_json() -> None:
    @tool
    def f(a: int) -> int:
        """Double it."""
        return 2 * a

    wire = f.schema.to_openai()
    assert json.loads(json.dumps(wire))["function"]["name"] == "f"
    assert wire["function"]["description"] == "Double it."


class Greeter:
    """Greets people."""

    def __call__(self, who: str, loud: bool = False) -> str:
        return f"HELLO {who}" if loud else f"hello {who}"


def test_callable_objects_and_partials_become_tools(runtime: Runtime) -> None:
    import functools

    greeter = make_tool(Greeter())
    assert greeter.schema.name == "Greeter"
    assert greeter.schema.description == "Greets people."
    assert list(props(greeter)) == ["who", "loud"]
    assert greeter.invoke({"who": "ann"}, tool_context(runtime)).content == "hello ann"

    def scale(x: float, factor: float) -> float:
        """Scale a number."""
        return x * factor

    doubled = make_tool(functools.partial(scale, factor=2.0), name="double")
    assert doubled.schema.description == "Scale a number."
    assert doubled.invoke({"x": 4}, tool_context(runtime)).content == "8.0"


def test_a_tool_declares_that_it_only_reads() -> None:
    @tool(read_only=True)
    def look(path: str) -> str:
        """Look at a file."""
        return path

    assert look.options.read_only is True
    assert make_tool(look.function).options.read_only is False  # the default: it may change things
    assert make_tool(look.function, read_only=True).options.read_only is True


def test_an_optional_context_parameter_stays_out_of_the_schema(runtime: Runtime) -> None:
    def run(command: str, ctx: ToolContext | None = None) -> str:
        """Run it."""
        return "ran" if ctx is not None else "no context"

    made = make_tool(run)
    assert list(made.schema.parameters["properties"]) == ["command"]
    assert made.invoke({"command": "x"}, tool_context(runtime)).content == "ran"
