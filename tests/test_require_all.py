"""AGENT_SMITH_REQUIRE_ALL=1 turns every kind of skip into a failure that gives the reason."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SKIPS = """
import pytest

@pytest.fixture
def peer():
    pytest.skip("the peer is missing")

def test_skips_in_its_body():
    pytest.skip("no browser here")

def test_skips_in_a_fixture(peer):
    pass

@pytest.mark.skipif(True, reason="not on this system")
def test_skips_by_mark():
    pass

@pytest.mark.xfail(reason="a known bug", strict=True)
def test_expected_to_fail():
    assert False

def test_runs():
    pass
"""


def run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> pytest.RunResult:
    if value is None:
        monkeypatch.delenv("AGENT_SMITH_REQUIRE_ALL", raising=False)
    else:
        monkeypatch.setenv("AGENT_SMITH_REQUIRE_ALL", value)
    return pytester.runpytest_inprocess("-p", "tests.support.require_all", "-rfs")


def test_without_the_variable_a_skip_stays_a_skip(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_peers=SKIPS)
    run(pytester, monkeypatch, None).assert_outcomes(passed=1, skipped=3, xfailed=1)


def test_under_the_variable_each_skip_fails_with_its_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_peers=SKIPS)
    result = run(pytester, monkeypatch, "1")
    # A skip in the body fails the test; one in its setup (fixture, mark) is an error.
    result.assert_outcomes(passed=1, failed=1, errors=2, xfailed=1)
    for reason in ("no browser here", "the peer is missing", "not on this system"):
        result.stdout.fnmatch_lines([f"*AGENT_SMITH_REQUIRE_ALL=1 allows no skip: {reason}*"])


def test_under_the_variable_a_module_skipped_at_import_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_optional='import pytest\npytest.importorskip("no_such_module_x")\n')
    result = run(pytester, monkeypatch, "1")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*allows no skip: could not import 'no_such_module_x'*"])
