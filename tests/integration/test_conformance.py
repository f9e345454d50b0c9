"""The official MCP conformance suite's client scenarios, run against our McpClient.

The suite (``@modelcontextprotocol/conformance``, on the Node 22 from the
``node`` npm package) starts a test server per scenario and launches
``conformance_client.py`` against it. A scenario counts as passed only when
its checks report at least one success and no failure or warning.
"""

from __future__ import annotations

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
BASE_SPEC = "2025-06-18"
#: Scenarios of the base revision's suite that are not OAuth (all of them must pass).
BASE_SCENARIOS = ("initialize", "tools_call")
#: Non-OAuth scenarios of later revisions, each run on its own with --scenario.
LATER_SCENARIOS = ("elicitation-sep1034-client-defaults", "sse-retry")
SUITE_TIMEOUT = 600


def _conformance(*args: str, out: Path | None = None) -> subprocess.CompletedProcess[str]:
    cli = require_npm_bin("conformance")
    require_npm_bin("node")
    cmd = [str(cli), *args]
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


def _runner_command() -> str:
    return f"{sys.executable} {RUNNER}"


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


def _client_scenarios() -> dict[str, list[str]]:
    listing = _conformance("list", "--client")
    assert listing.returncode == 0, listing.stderr
    found: dict[str, list[str]] = {}
    for name, versions in re.findall(r"^\s*-\s*(\S+)\s*\[([^\]]*)\]", listing.stdout, re.M):
        found[name] = [v.strip() for v in versions.split(",")]
    return found


def test_base_revision_suite_passes_with_only_oauth_as_expected_failures(tmp_path: Path) -> None:
    result = _conformance(
        "client",
        "--command",
        _runner_command(),
        "--suite",
        "all",
        "--spec-version",
        BASE_SPEC,
        "--expected-failures",
        str(BASELINE),
        out=tmp_path,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-5000:]
    for scenario in BASE_SCENARIOS:
        _assert_passed(tmp_path, scenario, log)


@pytest.mark.parametrize("scenario", LATER_SCENARIOS)
def test_later_revision_scenario_passes(scenario: str, tmp_path: Path) -> None:
    result = _conformance(
        "client", "--command", _runner_command(), "--scenario", scenario, out=tmp_path
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-5000:]
    _assert_passed(tmp_path, scenario, log)


def test_every_non_oauth_client_scenario_is_run_and_only_oauth_is_in_the_baseline() -> None:
    scenarios = _client_scenarios()
    non_oauth = {name for name in scenarios if not name.startswith("auth/")}
    assert non_oauth == set(BASE_SCENARIOS) | set(LATER_SCENARIOS)
    assert {n for n in BASE_SCENARIOS if BASE_SPEC not in scenarios[n]} == set()
    baseline = re.findall(r"^\s*-\s*(\S+)", BASELINE.read_text(), re.M)
    assert baseline and all(name.startswith("auth/") for name in baseline)
    expected_base_oauth = {
        n for n, v in scenarios.items() if n.startswith("auth/") and BASE_SPEC in v
    }
    assert set(baseline) == expected_base_oauth
