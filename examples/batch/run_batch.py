"""Run the agent of spec.json over inputs.jsonl on local threads, resumably.

Run: python examples/batch/run_batch.py [results.jsonl], with a server on :8080
(`agent-smith serve --local` in another terminal; its four slots answer four
inputs at once) or at $LLAMA_SERVER_URL. Running it again skips the inputs
already in the results file. The same run on a Dask cluster: pass
executor=Client(...).get_executor().
"""

import dataclasses
import json
import os
import sys
from pathlib import Path

from agent_smith import AgentSpec, run_batch

here = Path(__file__).parent
spec = AgentSpec.load(here / "spec.json")
if "LLAMA_SERVER_URL" in os.environ:
    spec = dataclasses.replace(spec, base_url=os.environ["LLAMA_SERVER_URL"])
rows = [json.loads(line) for line in (here / "inputs.jsonl").read_text().splitlines()]
expected = {row["id"]: row["expected"] for row in rows}
results = sys.argv[1] if len(sys.argv) > 1 else "results.jsonl"

with run_batch(spec, rows, results=results, concurrency=4) as run:
    for result in run:
        if result.ok:
            verdict = "right" if expected[result.id] in (result.content or "") else "wrong"
            print(f"{result.id}: {result.content!r} ({verdict})")
        else:
            print(f"{result.id}: failed after {result.attempts} attempts: {result.error}")
print(f"{run.skipped} skipped (already in {results}), {run.pending} run")
