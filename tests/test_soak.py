"""The short soak: agents on threads through injected faults leave nothing behind."""

from __future__ import annotations

from tests.support.soak import soak

#: Allowed growth of resident memory over the run (allocator slack, caches), KiB.
RSS_SLACK_KIB = 30 * 1024


def test_agents_through_faults_keep_history_consistent_and_release_everything() -> None:
    soak(agents=2, turns=2, seed=7)  # warm-up: imports, caches, first connections
    report = soak(agents=6, turns=8, seed=11)
    assert report.turns == 6 * 8
    assert report.inconsistent == []
    faults = set(report.outcomes) - {"answered"}
    assert report.outcomes["answered"] > 0 and faults, report.outcomes  # both happened
    assert report.before is not None and report.after is not None
    assert report.after.threads <= report.before.threads
    assert report.after.open_files <= report.before.open_files
    assert report.after.rss_kib - report.before.rss_kib < RSS_SLACK_KIB
