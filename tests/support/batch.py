"""What batch tests share: importable tools for specs, scripted-server responders, files.

Tools here are named in specs as ``tests.support.batch:<name>``, so worker
processes (a process pool, Dask workers) import them the way a user's own
module is imported. The responders run in the test process, inside the
scripted LLM server, and answer each request from its last user message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agent_smith import Tool, ToolContext, ToolResult, ToolSchema, tool
from agent_smith.tools.base import JsonObject
from tests.support.llm_server import Calls, Reply, Text


@tool
def worker_pid() -> int:
    """The id of the process this tool runs in (tells which worker ran an input)."""
    return os.getpid()


class ShoutTool(Tool):
    """``shout(text)``: the text in capitals (a Tool subclass named by its class)."""

    @property
    def schema(self) -> ToolSchema:
        return ToolSchema(
            name="shout",
            description="Upper-case a text.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        )

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        return ToolResult(str(args.get("text", "")).upper())


@tool(requires_approval=True)
def delete_record(name: str) -> str:
    """Delete a record (a call that needs approval)."""
    return f"deleted {name}"


def deny_everything(request: object) -> bool:
    """An approver for unattended runs: no call that needs approval may run."""
    return False


def add(a: int, b: int) -> int:
    """Add two integers (a plain function, wrapped by make_tool)."""
    return a + b


NOT_A_TOOL = 42

Verdicts = list["Verdict"]  # a typing construct, named like a class


@dataclass(frozen=True)
class Verdict:
    """A typed output for specs that name one."""

    label: str


def write_batch_files(
    folder: Path, spec: JsonObject, inputs: Iterable[JsonObject]
) -> tuple[Path, Path]:
    """``folder/spec.json`` holding ``spec``, ``folder/inputs.jsonl`` a line per input."""
    spec_path, inputs_path = folder / "spec.json", folder / "inputs.jsonl"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    inputs_path.write_text("".join(json.dumps(i) + "\n" for i in inputs), encoding="utf-8")
    return spec_path, inputs_path


def last_user_text(body: JsonObject) -> str:
    """The text of the request's last user message."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content: str = users[-1]["content"] if users else ""
    return content


def tool_results(body: JsonObject) -> list[str]:
    """Contents of the tool messages after the last user message."""
    messages = body.get("messages", [])
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return [m["content"] for m in messages[last + 1 :] if m.get("role") == "tool"]


def answer(body: JsonObject) -> Reply:
    """``answer: <input>`` for every request (an instant, tool-less model)."""
    return Text(f"answer: {last_user_text(body)}")


def pid_then_answer(body: JsonObject) -> Reply:
    """First call ``worker_pid``, then answer ``<input> ran in <pid>``."""
    results = tool_results(body)
    if not results:
        return Calls(("worker_pid", {}))
    return Text(f"{last_user_text(body)} ran in {results[-1]}")
