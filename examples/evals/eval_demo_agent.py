"""Evaluate the demo agent (calculator, files, clock) on demo_cases.jsonl; write an HTML report.

Run: python examples/evals/eval_demo_agent.py [report.html] [repeat], with a server
on :8080 (`agent-smith serve --local` in another terminal) or at $LLAMA_SERVER_URL.
The agent is the one `agent-smith --local` chats with (agent_smith/cli/demo_agent.py):
a fresh one per run of a case, sharing one connection to the bundled MCP server
(its `now` tool is the clock). Open the report in a browser: no server needed.
"""

import os
import sys
from pathlib import Path

from agent_smith import LlmClient, McpClient, Runtime, SamplingParams
from agent_smith.cli.demo_agent import demo_agent, demo_server
from agent_smith.evals import Dataset, evaluate

here = Path(__file__).parent
url = os.environ.get("LLAMA_SERVER_URL", "http://127.0.0.1:8080")
out = sys.argv[1] if len(sys.argv) > 1 else "eval_report.html"
repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 1
clock_server = demo_server()
if clock_server is None:
    raise SystemExit(
        "run this from an agent_smith checkout: it needs examples/mcp_server_example.py"
    )

with Runtime() as runtime, McpClient.connect(clock_server, runtime=runtime) as clock:
    # The demo's sampling on a local model: greedy, every reply capped.
    sampling = SamplingParams(temperature=0, max_tokens=256)
    llm = LlmClient(url, default_sampling=sampling, runtime=runtime)

    def make_agent():
        agent = demo_agent(llm, sandbox=here / "sandbox", small=True, runtime=runtime)
        agent.add_mcp_client(clock)
        return agent

    report = evaluate(Dataset.load(here / "demo_cases.jsonl"), make_agent, repeat=repeat)

print(report.table())
report.save(out)
print(f"report written to {out}")
