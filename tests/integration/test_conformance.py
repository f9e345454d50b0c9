"""The official MCP conformance suite's client scenarios, run against our McpClient.

The suite (``@modelcontextprotocol/conformance``, on the Node 22 from the
``node`` npm package) starts a test server per scenario and launches
``conformance_client.py`` against it. A scenario counts as passed only when
its checks report at least one success and no failure or warning.

The OAuth scenarios run per revision, each revision's in parallel
(2025-11-25, which holds 2025-06-18's too; 2025-03-26; draft; extension).
The other scenarios run one at a time: ``sse-retry`` measures how long the
client waits before resuming a stream, which a machine busy with a dozen
parallel clients would blur.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.peers import node_env, require_npm_bin

HERE = Path(__file__).parent
RUNNER = HERE / "conformance_client.py"
BASELINE = HERE / "conformance-baseline.yml"
#: Scenarios run one at a time (every client scenario that is not OAuth).
SINGLE_SCENARIOS = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")
#: The OAuth scenarios run per revision, each revision's in one go (2025-11-25: ``--suite auth``).
OAUTH_RUNS = ("2025-11-25", "2025-03-26", "draft", "extension")
#: Released protocol revisions: every one of their scenarios must pass.
RELEASED = ("2025-03-26", "2025-06-18", "2025-11-25")
SUITE_TIMEOUT = 600


#: 0.1.16's CLI by path: ``.bin/conformance`` may be either version (both name that bin).
SUITE = (
    HERE / "npm" / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
)
#: How long the CLI gives each client run (its default, 30 s, is short on a loaded machine).
CLIENT_TIMEOUT_MS = "120000"


def _conformance(*args: str, out: Path | None = None) -> subprocess.CompletedProcess[str]:
    require_npm_bin("conformance")
    node = require_npm_bin("node")
    cmd = [str(node), str(SUITE), *args]
    if out is not None:
        cmd += ["-o", str(out)]
    return subprocess.run(
        cmd,
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
        cwd=HERE.parent.parent,
        check=False,
    )


def _run(*selection: str, out: Path) -> str:
    """Run the scenarios ``selection`` picks (with the baseline); the CLI's output."""
    result = _conformance(
        "client",
        "--command",
        f"{sys.executable} {RUNNER}",
        *selection,
        "--expected-failures",
        str(BASELINE),
        "--timeout",
        CLIENT_TIMEOUT_MS,
        out=out,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-5000:]
    return log


def _checks(out: Path, scenario: str) -> list[dict[str, object]]:
    """The checks.json of ``scenario`` under the results directory ``out``."""
    parent = out / Path(scenario).parent
    found = sorted(parent.glob(f"{Path(scenario).name}-*/checks.json"))
    assert found, f"no results for {scenario} under {out}"
    checks: list[dict[str, object]] = json.loads(found[-1].read_text())
    return checks


def _assert_passed(out: Path, scenario: str, log: str) -> None:
    checks = _checks(out, scenario)
    statuses = [str(c.get("status")) for c in checks]
    bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
    assert not bad, f"{scenario}: {json.dumps(bad, indent=1)}\n{log[-3000:]}"
    assert "SUCCESS" in statuses, f"{scenario}: no successful check: {statuses}\n{log[-3000:]}"


@functools.cache
def _listed(*args: str) -> dict[str, list[str]]:
    """Scenario names (and their revisions) from ``conformance list`` (asked once per run)."""
    listing = _conformance("list", *args)
    assert listing.returncode == 0, listing.stderr
    return {
        name: [v.strip() for v in versions.split(",")]
        for name, versions in re.findall(r"^\s*-\s*(\S+)\s*\[([^\]]*)\]", listing.stdout, re.M)
    }


def _baseline() -> list[str]:
    return re.findall(r"^\s*-\s*(\S+)", BASELINE.read_text(), re.M)


@pytest.mark.parametrize("scenario", SINGLE_SCENARIOS)
def test_scenario_passes(scenario: str, tmp_path: Path) -> None:
    log = _run("--scenario", scenario, out=tmp_path)
    _assert_passed(tmp_path, scenario, log)


@pytest.mark.parametrize("revision", OAUTH_RUNS)
def test_oauth_scenarios_pass_but_for_the_baseline(revision: str, tmp_path: Path) -> None:
    selection = ["--suite", "auth"] if revision == "2025-11-25" else ["--suite", "all"]
    log = _run(*selection, "--spec-version", revision, out=tmp_path)
    ran = set(re.findall(r"^[✓✗] (\S+):", log, re.M))
    listed = {n for n, v in _listed("--client").items() if n.startswith("auth/") and revision in v}
    assert ran == listed, f"ran {sorted(ran)}, listed {sorted(listed)}"
    for scenario in sorted(ran - set(_baseline())):
        _assert_passed(tmp_path, scenario, log)


def test_every_client_scenario_is_run_and_released_ones_are_not_in_the_baseline() -> None:
    scenarios = _listed("--client")
    oauth = {name for name in scenarios if name.startswith("auth/")}
    assert set(scenarios) - oauth == set(SINGLE_SCENARIOS)
    # Every OAuth scenario belongs to one of the runs above (2025-06-18's are 2025-11-25's too).
    for name in oauth:
        assert set(scenarios[name]) & set(OAUTH_RUNS), (name, scenarios[name])
    released = {n for n, v in scenarios.items() if set(v) & set(RELEASED)}
    assert not released & set(_baseline()), "a released revision's scenario is in the baseline"


# -- the next suite (0.2.0 alphas, installed as the npm alias ``conformance-next``) ---------

#: The suite's alpha that holds the 2026-07-28 scenarios (npm alias: the package name is taken).
NEXT_SUITE = HERE / "npm" / "node_modules" / "conformance-next" / "dist" / "index.js"
NEXT_BASELINE = HERE / "conformance-next-baseline.yml"
#: ``--requirements``: exactly the scenarios each revision requires, frozen at its release.
NEXT_REQUIREMENTS = ("2025-11-25", "2026-07-28")


@pytest.mark.parametrize("revision", NEXT_REQUIREMENTS)
def test_the_next_suites_requirements_pass_but_for_its_baseline(
    revision: str, tmp_path: Path
) -> None:
    node = require_npm_bin("node")
    if not NEXT_SUITE.exists():
        require_npm_bin("conformance-next")  # skips (or fails under REQUIRE_ALL) with the reason
    result = subprocess.run(
        [
            str(node),
            str(NEXT_SUITE),
            "client",
            "--command",
            f"{sys.executable} {RUNNER}",
            "--requirements",
            revision,
            "--expected-failures",
            str(NEXT_BASELINE),
            "--timeout",
            CLIENT_TIMEOUT_MS,
            "-o",
            str(tmp_path),
        ],
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
        cwd=HERE.parent.parent,
        check=False,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-5000:]
    ran = set(re.findall(r"^[✓✗] (\S+):", log, re.M))
    expected = set(re.findall(r"^\s*-\s*(\S+)", NEXT_BASELINE.read_text(), re.M))
    assert ran, log[-3000:]
    for scenario in sorted(ran - expected):
        _assert_passed(tmp_path, scenario, log)
