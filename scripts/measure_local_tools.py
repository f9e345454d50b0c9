"""Does the demo agent use its tools on the default local model? A table of prompts.

Serves the default local model (Qwen2.5-Coder-0.5B-Instruct, fetched once
into the model cache) with :class:`LocalLlamaServer`, builds the agent the
way ``agent-smith --local`` does (its system prompt and sampling, the
calculator and the files, search and shell toolkits — anything that asks
for approval is denied — over a sandbox of small files, the bundled MCP
server's ``echo`` and ``now``), and
sends each prompt below to a fresh agent, as the REPL sends a line (with
:func:`~agent_smith.cli.file_mentions.mention_files`). For each: which tools were
called, whether a call was recovered from text
(:mod:`agent_smith.agent.text_tool_calls`), and whether the answer is right
(it contains the expected words; for chat prompts: some words and no tool).

    .venv/bin/python scripts/measure_local_tools.py                 # as --local samples
    .venv/bin/python scripts/measure_local_tools.py --temperature 0.8 --runs 3
    .venv/bin/python scripts/measure_local_tools.py --no-recovery   # text calls stay text
    .venv/bin/python scripts/measure_local_tools.py --no-mentions   # lines sent as typed

The table is Markdown, for docs/llama.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from agent_smith import Agent, AgentConfig, LlmClient, LocalLlamaServer, Runtime, SamplingParams
from agent_smith.agent.events import AssistantTurn, FinalAnswer, ToolCallRequested
from agent_smith.cli.demo_tools import demo_tools
from agent_smith.cli.file_mentions import mention_files
from agent_smith.cli.main import EXAMPLE_MCP_SERVER, LOCAL_SAMPLING, SYSTEM_PROMPT
from agent_smith.cli.models import ensure_default_model
from agent_smith.errors import AgentSmithError
from agent_smith.mcp.config import ServerConfig
from agent_smith.toolkits import Workspace

FILES = {
    "notes.txt": "The team meeting moved to Thursday at 3 pm, in room B12.\n",
    "todo/list.txt": "- buy milk\n- call the plumber\n- renew the passport\n",
    "config.ini": "[server]\nhost = 0.0.0.0\nport = 8443\nworkers = 4\n",
    "recipe.md": "# Pancakes\n\n200 g flour, 2 eggs, 300 ml milk, a pinch of salt.\n",
}


@dataclass(frozen=True)
class Prompt:
    kind: str  # "arithmetic", "file" or "chat"
    text: str
    tool: str | None  # the tool it needs, if any
    expect: tuple[str, ...]  # any of these in the answer makes it right ("" = any words)


PROMPTS = (
    Prompt("arithmetic", "What is 17 times 23?", "calculator", ("391",)),
    Prompt("arithmetic", "What is 1234 * 5678?", "calculator", ("7006652", "7,006,652")),
    Prompt("arithmetic", "Compute (3 + 4) ^ 2 / 7.", "calculator", ("7",)),
    Prompt("arithmetic", "What is 2 to the power of 10?", "calculator", ("1024", "1,024")),
    Prompt(
        "arithmetic",
        "I bought 3 books at 12.50 each and a pen for 1.25. How much did I pay in total?",
        "calculator",
        ("38.75",),
    ),
    Prompt("arithmetic", "What is 15% of 240?", "calculator", ("36",)),
    Prompt("file", "Read notes.txt and tell me when the meeting is.", "read_file", ("Thu",)),
    Prompt("file", "What is on my list in todo/list.txt?", "read_file", ("milk",)),
    Prompt("file", "Which port does config.ini set?", "read_file", ("8443",)),
    Prompt("file", "How much flour does the recipe in recipe.md need?", "read_file", ("200",)),
    Prompt("file", "Summarise notes.txt in one sentence.", "read_file", ("Thu", "B12")),
    Prompt("file", "How many workers does config.ini configure?", "read_file", ("4",)),
    Prompt("file", "Does todo/list.txt mention the plumber?", "read_file", ("yes",)),
    Prompt("file", "What are the ingredients in recipe.md?", "read_file", ("eggs",)),
    Prompt("chat", "Hello! Who are you?", None, ("",)),
    Prompt("chat", "How do you say 'good morning' in French?", None, ("bonjour",)),
    Prompt("chat", "What is the capital of Japan?", None, ("tokyo",)),
    Prompt("chat", "Write a two-line poem about the sea.", None, ("",)),
)


@dataclass(frozen=True)
class Outcome:
    called: tuple[str, ...]
    recovered: bool
    answer: str
    seconds: float

    def right(self, prompt: Prompt) -> bool:
        text = self.answer.lower()
        said = any(word.lower() in text for word in prompt.expect) and bool(text.strip())
        if prompt.tool is None:
            return said and not self.called
        return said and prompt.tool in self.called


def ask(agent: Agent, message: str) -> Outcome:
    called: list[str] = []
    recovered = False
    answer = ""
    started = time.perf_counter()
    try:
        for event in agent.stream(message):
            if isinstance(event, ToolCallRequested):
                called.append(event.call.name)
            elif isinstance(event, AssistantTurn):
                recovered = recovered or event.recovered_tool_calls
            elif isinstance(event, FinalAnswer):
                answer = event.message.content
    except AgentSmithError as err:
        answer = f"[{type(err).__name__}: {err}]"
    return Outcome(tuple(called), recovered, answer, time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a GGUF file (default: the default local model)")
    parser.add_argument("--temperature", type=float, help="default: --local's (0)")
    parser.add_argument("--runs", type=int, default=1, help="times each prompt is asked")
    parser.add_argument("--no-recovery", action="store_true", help="text_tool_calls=False")
    parser.add_argument("--no-default-mcp", action="store_true", help="without echo and now")
    parser.add_argument("--no-mentions", action="store_true", help="without mention_files")
    parser.add_argument("--kind", choices=("arithmetic", "file", "chat"), help="only these")
    args = parser.parse_args()

    model = Path(args.model) if args.model else ensure_default_model(progress=print)
    sampling = LOCAL_SAMPLING
    if args.temperature is not None:
        sampling = SamplingParams(temperature=args.temperature, max_tokens=sampling.max_tokens)
    config = AgentConfig(text_tool_calls=not args.no_recovery)
    rows: list[tuple[Prompt, list[Outcome]]] = []
    with tempfile.TemporaryDirectory() as sandbox, Runtime() as runtime:
        for name, text in FILES.items():
            (Path(sandbox) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(sandbox) / name).write_text(text, encoding="utf-8")
        with LocalLlamaServer(model, threads=2) as server:
            llm = LlmClient(server.endpoint, runtime=runtime, default_sampling=sampling)
            for prompt in [p for p in PROMPTS if args.kind in (None, p.kind)]:
                outcomes = []
                for _ in range(args.runs):
                    tools = demo_tools(sandbox)
                    workspace = Workspace(sandbox)
                    message = (
                        prompt.text if args.no_mentions else mention_files(prompt.text, workspace)
                    )
                    with Agent(
                        llm,
                        SYSTEM_PROMPT,
                        tools,
                        config=config,
                        runtime=runtime,
                        approver=lambda request: False,  # no prompt asks to change a file
                    ) as agent:
                        if not args.no_default_mcp:
                            command = (sys.executable, str(EXAMPLE_MCP_SERVER))
                            agent.connect_mcp(ServerConfig(alias="demo", command=command))
                        outcomes.append(ask(agent, message))
                rows.append((prompt, outcomes))
                print(f"# {prompt.text!r}: {outcomes[-1]}", file=sys.stderr, flush=True)
    print_table(rows, runs=args.runs)
    return 0


def print_table(rows: list[tuple[Prompt, list[Outcome]]], *, runs: int) -> None:
    print("| kind | prompt | needs | tool called | from text | right | s |")
    print("|---|---|---|---|---|---|---|")
    for prompt, outcomes in rows:
        if runs == 1:
            (o,) = outcomes
            called = ", ".join(o.called) or "—"
            text = "yes" if o.recovered else "—"
            right = "yes" if o.right(prompt) else "no"
            seconds = f"{o.seconds:.1f}"
        else:
            used = sum(prompt.tool in o.called if prompt.tool else not o.called for o in outcomes)
            called = f"{used}/{runs}" + ("" if prompt.tool else " (none)")
            text = f"{sum(o.recovered for o in outcomes)}/{runs}"
            right = f"{sum(o.right(prompt) for o in outcomes)}/{runs}"
            seconds = f"{sum(o.seconds for o in outcomes) / runs:.1f}"
        needs = prompt.tool or "—"
        cells = (prompt.kind, prompt.text, needs, called, text, right, seconds)
        print("| " + " | ".join(cells) + " |")
    needing = [(p, o) for p, outs in rows if p.tool for o in outs]
    used = sum(p.tool in o.called for p, o in needing)
    right = sum(o.right(p) for p, outs in rows for o in outs)
    total = sum(len(outs) for _, outs in rows)
    per_tool = ", ".join(
        f"{tool} {sum(p.tool == tool and tool in o.called for p, o in needing)}"
        f"/{sum(p.tool == tool for p, _ in needing)}"
        for tool in dict.fromkeys(p.tool for p, _ in needing)
    )
    print(
        f"\nTool used where needed: {used}/{len(needing)} ({per_tool}); "
        f"right answers: {right}/{total}."
    )


if __name__ == "__main__":
    sys.exit(main())
