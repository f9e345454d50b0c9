"""What a new user sees first: the demo's questions on a local model, answered right and fast?

Serves a local model (default: the default one, Qwen2.5-Coder-0.5B, fetched
once into the model cache) with :class:`LocalLlamaServer` as ``agent-smith
--local`` does, builds the demo's own agent with
:func:`~agent_smith.cli.demo_agent.agent_from_options` from the REPL's
own options (``--local MODEL --sandbox DIR``: its tools, system prompt,
sampling and small-model class; anything that asks for approval is denied),
with the bundled MCP server (``now``), over a sandbox of small files and a
big one, and sends each prompt below as the REPL sends a line (with
:func:`~agent_smith.cli.file_mentions.mention_files`). Weather prompts go to
an agent built as ``examples/flask_app.py`` builds it (its ``get_weather``
and ``save_note``, its system prompt), skill prompts to the demo's agent
with a skill of ``examples/skills`` active; a follow-up is the second turn
of one conversation. Per prompt: the tools called, whether the answer is
right (every fact asked for, by a check of its own: the time of day of the
turn, every item of a list, release notes that are not the request echoed
back, ...), which calls were needless (an activity line the user saw for a
tool the prompt did not need), whether it is **right** as a careful reader
says (a right answer, the needed tool called, no needless call), whether
any text of a tool call reached the user (the streamed ``TokenDelta``
text, and the answer), and the wall time. ``--answers FILE`` writes every
call and whole answer, to be read by a person.

    .venv/bin/python scripts/probe_first_answers.py                  # the default model
    .venv/bin/python scripts/probe_first_answers.py --local qwen1.5b
    .venv/bin/python scripts/probe_first_answers.py --all-tools      # every toolkit
    .venv/bin/python scripts/probe_first_answers.py --every 2        # every other prompt
    .venv/bin/python scripts/probe_first_answers.py --prompt big.txt # the prompts naming it
    .venv/bin/python scripts/probe_first_answers.py --answers answers.md  # and every answer

Ctrl-C prints the table of the prompts asked so far.

The table is Markdown, for docs/llama.md and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from agent_smith import Agent, AgentConfig, LlmClient, LocalLlamaServer, Runtime
from agent_smith.agent.events import FinalAnswer, ToolCallRequested
from agent_smith.cli.demo_agent import agent_from_options, demo_server, few_tools
from agent_smith.cli.file_mentions import mention_files
from agent_smith.cli.main import LOCAL_SAMPLING, parse_args
from agent_smith.cli.models import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, ensure_default_model
from agent_smith.errors import AgentSmithError
from agent_smith.llm.events import TokenDelta
from agent_smith.skills import load_skill
from agent_smith.toolkits import Workspace

ROOT = Path(__file__).resolve().parents[1]
YEAR = str(datetime.now(timezone.utc).year)
BIG_LINES = 4000
FILES = {
    "notes.txt": "The team meeting moved to Thursday at 3 pm, in room B12.\n",
    "todo/list.txt": "- buy milk\n- call the plumber\n- renew the passport\n",
    "config.ini": "[server]\nhost = 0.0.0.0\nport = 8443\nworkers = 4\n",
    "recipe.md": "# Pancakes\n\n200 g flour, 2 eggs, 300 ml milk, a pinch of salt.\n",
    "big.txt": "Inventory of the north warehouse\n"
    + "".join(f"shelf {n}: a box of steel screws\n" for n in range(1, BIG_LINES)),
}
#: Text of a tool call: none of this may reach the user.
CALL_TEXT = re.compile(r'"arguments"\s*:|<tool_call>|\{\s*"name"\s*:')


#: Whether an answer is right: the answer's text, the time the turn started (UTC).
Check = Callable[[str, datetime], bool]


def says(*words: str) -> Check:
    """Right when the answer holds every one of ``words`` (case-insensitive)."""
    return lambda answer, at: all(word.lower() in answer.lower() for word in words)


def says_any(*words: str) -> Check:
    """Right when the answer holds one of ``words`` (case-insensitive)."""
    return lambda answer, at: any(word.lower() in answer.lower() for word in words)


def writes_notes(topics: tuple[str, ...], groups: tuple[str, ...], dropped: str = "") -> Check:
    """Release notes as the skill asks: each topic under its group, nothing users never see.

    Each of ``groups`` (Added, Fixed, Removed, ...) heads its change and no
    other group is used; ``dropped`` (a refactor) is left out. The request
    echoed back holds its ``;`` list; a how-to (a code fence) is not notes.
    """
    names = re.compile(r"\b(Added|Changed|Fixed|Removed)\b")

    def check(answer: str, at: datetime) -> bool:
        used = set(names.findall(answer))
        if used != set(groups) or (dropped and dropped.lower() in answer.lower()):
            return False
        return says(*topics)(answer, at) and "; " not in answer and "```" not in answer

    return check


def says_only_numbers_of(text: str) -> Callable[[str], bool]:
    """Whether an answer's numbers are all numbers of ``text`` (no count made up)."""
    known = set(re.findall(r"\d+", text))
    return lambda answer: set(re.findall(r"\d+", answer.replace(",", ""))) <= known


def says_time(answer: str, at: datetime) -> bool:
    """The time of day of the turn (UTC, within three minutes), 24-hour or 12-hour."""
    for hour, minute, half in re.findall(
        r"(?<!\d)(\d{1,2}):(\d{2})(?::\d{2})?\s*([AaPp]\.?[Mm])?", answer
    ):
        hours = int(hour) % 12 + (12 if half[:1].lower() == "p" else 0) if half else int(hour)
        told = at.replace(hour=hours % 24, minute=int(minute) % 60, second=0, microsecond=0)
        if abs((told - at).total_seconds()) <= 180:
            return True
    return False


def says_date(answer: str, at: datetime) -> bool:
    """The date of the turn (UTC): ISO, "7 December", "December 7" or "Dec 7"."""
    day, month, short = at.day, at.strftime("%B"), at.strftime("%b")
    forms = (at.date().isoformat(), f"{day} {month}", f"{month} {day}", f"{short} {day}")
    return any(re.search(re.escape(form) + r"(?!\d)", answer, re.IGNORECASE) for form in forms)


def introduces_itself(answer: str, at: datetime) -> bool:
    """A greeting answered by an assistant that says what it is (not "a calculator tool")."""
    text = answer.lower()
    return "assistant" in text and "calculator" not in text and "tool" not in text


@dataclass(frozen=True)
class Prompt:
    kind: str  # arithmetic, file, list, big file, time, weather, skill, follow-up, chat
    text: str
    tool: str | None  # the tool it needs (None: none)
    check: Check  # the answer is right (read as a careful reader reads it)
    agent: str = "demo"  # demo, weather, time-keeper or release-notes
    before: str | None = None  # the turn before it, in the same conversation
    #: Tools a careful reader would not mind besides the needed one (reading a file again).
    harmless: tuple[str, ...] = ()


PROMPTS = (
    Prompt("arithmetic", "What is 17 times 23?", "calculator", says("391")),
    Prompt("arithmetic", "What is 100 divided by 4?", "calculator", says("25")),
    Prompt("arithmetic", "What is 1234 * 5678?", "calculator", says_any("7006652", "7,006,652")),
    Prompt("arithmetic", "What is 2 to the power of 10?", "calculator", says_any("1024", "1,024")),
    Prompt(
        "arithmetic",
        "I bought 3 books at 12.50 each and a pen for 1.25. How much did I pay in total?",
        "calculator",
        says("38.75"),
    ),
    Prompt(
        "file",
        "Read notes.txt and tell me when the meeting is.",
        "read_file",
        lambda answer, at: (
            says("Thu")(answer, at) and says_any("3 pm", "3pm", "15:00", "3:00")(answer, at)
        ),
    ),
    Prompt("file", "Which port does config.ini set?", "read_file", says("8443")),
    Prompt(
        "file",
        "What is on my list in todo/list.txt?",
        "read_file",
        says("milk", "plumber", "passport"),
    ),
    Prompt("file", "How much flour does the recipe in recipe.md need?", "read_file", says("200")),
    Prompt("list", "Which files are in the todo folder?", "list_files", says("list.txt")),
    Prompt(
        "list",
        "List the files in this folder.",
        "list_files",
        says("notes.txt", "config.ini", "recipe.md", "big.txt", "todo"),
    ),
    Prompt(
        "big file",
        "Read big.txt and tell me what it contains.",
        "read_file",
        lambda answer, at: (
            says("screw")(answer, at)
            and says_any("inventory", "warehouse", "shelf", "shelves")(answer, at)
            and says_only_numbers_of(FILES["big.txt"])(answer)
        ),
    ),
    Prompt(
        "big file",
        "What is the first line of big.txt?",
        "read_file",
        says("Inventory of the north warehouse"),
    ),
    Prompt("time", "What time is it now?", "mcp_demo__now", says_time),
    Prompt("time", "What is the date today?", "mcp_demo__now", says_date),
    Prompt(
        "weather", "What's the weather in Paris?", "get_weather", says("sunny", "21"), "weather"
    ),
    Prompt(
        "weather",
        "Is it sunny in Tokyo today?",
        "get_weather",
        lambda answer, at: (
            says("sunny")(answer, at)
            and not says_any("not sunny", "isn't sunny", "no,")(answer, at)
        ),
        "weather",
    ),
    Prompt("skill", "What time is it?", "mcp_example__now", says_time, "time-keeper"),
    Prompt("skill", "What is today's date?", "mcp_example__now", says_date, "time-keeper"),
    Prompt(
        "skill",
        "Write release notes for: add dark mode; fix crash when saving an empty file; "
        "refactor the tests.",
        None,
        writes_notes(("dark mode", "crash"), ("Added", "Fixed"), dropped="refactor"),
        "release-notes",
    ),
    Prompt(
        "skill",
        "Release notes for: remove the legacy CSV export; fix the login timeout.",
        None,
        writes_notes(("CSV", "login"), ("Removed", "Fixed")),
        "release-notes",
    ),
    Prompt(
        "follow-up",
        "And what is that plus 9?",
        "calculator",
        says("400"),
        before="What is 17 times 23?",
    ),
    Prompt(
        "follow-up",
        "Which room is it in?",
        None,
        says("B12"),
        before="Read notes.txt and tell me when the meeting is.",
        harmless=("read_file",),
    ),
    Prompt("chat", "What is the capital of Japan?", None, says("Tokyo")),
    Prompt("chat", "Hello! Who are you?", None, introduces_itself),
)


@dataclass(frozen=True)
class Outcome:
    calls: tuple[str, ...]  # each call as the activity line shows it: name and arguments
    answer: str
    shown_call: bool  # text of a call reached the user
    seconds: float
    at: datetime  # when the turn started (UTC)

    @property
    def called(self) -> tuple[str, ...]:
        return tuple(call.split(" ", 1)[0] for call in self.calls)

    def needless(self, prompt: Prompt) -> tuple[str, ...]:
        """The calls the prompt did not need (each one an activity line the user saw)."""
        fine = {prompt.tool, *prompt.harmless}
        return tuple(name for name in self.called if name not in fine)

    def answered(self, prompt: Prompt) -> bool:
        """The answer is right, whatever the tools (the ``answer`` column)."""
        return bool(self.answer.strip()) and prompt.check(self.answer, self.at)

    def right(self, prompt: Prompt) -> bool:
        """Right: the right answer, with the needed tool, and no needless call."""
        needed = prompt.tool is None or prompt.tool in self.called
        return self.answered(prompt) and needed and not self.needless(prompt)


def ask(agent: Agent, message: str) -> Outcome:
    """One turn, as the REPL shows it: the streamed text, else the final answer."""
    calls: list[str] = []
    streamed: list[str] = []
    answer = ""
    at = datetime.now(timezone.utc)
    started = time.perf_counter()
    try:
        for event in agent.stream(message):
            if isinstance(event, TokenDelta):
                streamed.append(event.text)
            elif isinstance(event, ToolCallRequested):
                calls.append(f"{event.call.name} {json.dumps(event.call.arguments)}")
            elif isinstance(event, FinalAnswer):
                answer = event.message.content
    except AgentSmithError as err:
        answer = f"[{type(err).__name__}: {err}]"
    seconds = time.perf_counter() - started
    shown = "".join(streamed) + "\n" + answer
    return Outcome(tuple(calls), answer, bool(CALL_TEXT.search(shown)), seconds, at)


def _flask_example() -> object:
    """examples/flask_app.py as a module (its tools and system prompt)."""
    spec = importlib.util.spec_from_file_location("flask_app", ROOT / "examples" / "flask_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--local", choices=list(LOCAL_MODELS), default=DEFAULT_LOCAL_MODEL, help="the model"
    )
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    parser.add_argument("--all-tools", action="store_true", help="every toolkit, as the flag")
    parser.add_argument("--kind", help="only prompts of this kind")
    parser.add_argument(
        "--prompt",
        action="append",
        metavar="TEXT",
        help="only prompts holding TEXT (case-insensitive; repeatable)",
    )
    parser.add_argument(
        "--every", type=int, default=1, metavar="N", help="every Nth prompt (a slow model)"
    )
    parser.add_argument(
        "--answers", type=Path, metavar="FILE", help="write every answer in full to FILE"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="the agent's DEBUG log")
    args = parser.parse_args()
    if args.verbose:
        logging.basicConfig(format="%(asctime)s %(name)s: %(message)s")
        logging.getLogger("agent_smith").setLevel(logging.DEBUG)

    model = ensure_default_model(args.local, progress=print)
    small = LOCAL_MODELS[args.local].small
    flask_app = _flask_example()
    rows: list[tuple[Prompt, Outcome]] = []
    with tempfile.TemporaryDirectory() as sandbox, Runtime() as runtime:
        for name, text in FILES.items():
            (Path(sandbox) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(sandbox) / name).write_text(text, encoding="utf-8")
        workspace = Workspace(sandbox)
        with LocalLlamaServer(model, threads=args.threads) as server:
            llm = LlmClient(server.endpoint, runtime=runtime, default_sampling=LOCAL_SAMPLING)

            # The REPL's own options: --local MODEL --sandbox DIR [--all-tools].
            words = ["--local", args.local, "--sandbox", sandbox]
            options = parse_args([*words, "--all-tools"] if args.all_tools else words)

            def demo() -> Agent:
                deny = lambda request: False  # noqa: E731 (no prompt asks to change a file)
                agent = agent_from_options(options, llm, runtime=runtime, approver=deny)
                config = demo_server(few=few_tools(options))
                if config is not None:
                    agent.connect_mcp(config)
                return agent

            def weather() -> Agent:
                tools = [flask_app.get_weather, flask_app.save_note]  # type: ignore[attr-defined]
                config = AgentConfig(small_model=small)
                prompt = flask_app.SYSTEM_PROMPT  # type: ignore[attr-defined]
                return Agent(llm, prompt, tools, config=config, runtime=runtime)

            def skilled(name: str) -> Callable[[contextlib.ExitStack], Agent]:
                def build(stack: contextlib.ExitStack) -> Agent:
                    skill = stack.enter_context(
                        load_skill(ROOT / "examples" / "skills" / name, runtime=runtime)
                    )
                    agent = demo()
                    agent.activate(skill)
                    return agent

                return build

            builders: dict[str, Callable[[contextlib.ExitStack], Agent]] = {
                "demo": lambda stack: demo(),
                "weather": lambda stack: weather(),
                "time-keeper": skilled("time-keeper"),
                "release-notes": skilled("release-notes"),
            }
            try:
                for prompt in PROMPTS[:: args.every]:
                    if args.kind not in (None, prompt.kind):
                        continue
                    if args.prompt and not any(
                        text.lower() in prompt.text.lower() for text in args.prompt
                    ):
                        continue
                    with contextlib.ExitStack() as stack:
                        agent = builders[prompt.agent](stack)
                        with agent:
                            if prompt.before is not None:
                                ask(agent, mention_files(prompt.before, workspace))
                            outcome = ask(agent, mention_files(prompt.text, workspace))
                    rows.append((prompt, outcome))
                    print(f"# {prompt.text!r}: {outcome}", file=sys.stderr, flush=True)
            except KeyboardInterrupt:  # Ctrl-C: the table of the prompts asked so far
                print(f"# stopped after {len(rows)} prompts", file=sys.stderr)
    print_table(rows, model=LOCAL_MODELS[args.local].title)
    if args.answers is not None:
        write_answers(rows, args.answers)
    return 0


def print_table(rows: list[tuple[Prompt, Outcome]], *, model: str) -> None:
    print(f"{model}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end\n")
    columns = "kind | prompt | needs | tool called | answer right | needless call | right"
    print(f"| {columns} | call text shown | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for prompt, o in rows:
        cells = (
            prompt.kind,
            (f"({prompt.before}) " if prompt.before else "") + prompt.text,
            prompt.tool or "—",
            ", ".join(o.called) or "—",
            "yes" if o.answered(prompt) else "no",
            ", ".join(o.needless(prompt)) or "—",
            "yes" if o.right(prompt) else "no",
            "**yes**" if o.shown_call else "no",
            f"{o.seconds:.1f}",
        )
        print("| " + " | ".join(cells) + " |")
    times = [o.seconds for _, o in rows]
    right = sum(o.right(p) for p, o in rows)
    answered = sum(o.answered(p) for p, o in rows)
    needless = sum(bool(o.needless(p)) for p, o in rows)
    shown = sum(o.shown_call for _, o in rows)
    print(
        f"\nRight: {right}/{len(rows)} ({100 * right / len(rows):.0f}%); right answers whatever "
        f"the tools: {answered}; needless calls in {needless}; call text shown: {shown}; "
        f"median {statistics.median(times):.1f} s, slowest {max(times):.1f} s."
    )


def write_answers(rows: list[tuple[Prompt, Outcome]], path: Path) -> None:
    """Every prompt's calls and whole answer, in Markdown, to be read by a person."""
    lines: list[str] = []
    for n, (prompt, o) in enumerate(rows, 1):
        verdict = "right" if o.right(prompt) else "WRONG"
        lines += [f"## {n}. {prompt.text} ({verdict}, {o.seconds:.1f} s)", ""]
        lines += [f"- calling {call}" for call in o.calls] or ["- (no tool called)"]
        lines += ["", *(f"> {line}" for line in o.answer.splitlines()), ""]
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
