"""The dev UI's turn timeline and metrics charts in a real browser (headless Chromium, selenium).

A scripted turn calls a slow tool: the timeline shows the tool's bar as the
longest, with the duration the snapshot API gives, and the metrics view's
table counts the call. Screenshots go where test_web_browser.py puts them.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import requests

from agent_smith import Agent, LlmClient, MetricsCollector, Runtime, Session, tool
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.integration.test_web_browser import ask, text_of
from tests.support.browser import WAIT, shot
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SLOW = 0.6  # seconds: longer than the scripted model's replies by far


@tool
def slow_lookup(key: str) -> str:
    """Look a key up, slowly."""
    threading.Event().wait(SLOW)
    return f"{key}: found"


def test_the_timeline_shows_the_slow_tool_as_the_longest_bar_with_the_snapshots_numbers(
    no_thread_leak: None,
    collector: MetricsCollector,
    llm_server: ScriptedLlmServer,
    tmp_path: Path,
    runtime: Runtime,
    browser: Any,
) -> None:
    llm = LlmClient(llm_server.url, "test", runtime=runtime)

    def agent(session: Session) -> Agent:
        return Agent(llm, "You look things up.", [slow_lookup], session=session, name="finder")

    app = WebApp(agent, sessions=tmp_path / "c.db", metrics=collector)
    llm_server.script(Calls(("slow_lookup", {"key": "k1"})), Text("Found it."))
    wait = WebDriverWait(browser, WAIT)
    with WebServer(app).start() as server:
        browser.get(server.url + "/")
        wait.until(lambda d: d.find_element(By.ID, "views").is_displayed())
        ask(browser, "Look up k1")
        wait.until(lambda d: "Found it." in text_of(d, ".msg.assistant .text"))
        data = requests.get(f"{server.url}/api/metrics", timeout=WAIT).json()

        browser.find_element(By.ID, "view-timeline").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".turn rect.bar"))
        shot(browser, "8-timeline")
        bars = browser.find_elements(By.CSS_SELECTOR, ".turn rect.bar")
        longest = max(bars, key=lambda bar: float(bar.get_attribute("width")))
        assert (longest.get_attribute("data-kind"), longest.get_attribute("data-name")) == (
            "tool",
            "slow_lookup",
        )
        [turn] = data["turns"]
        [tool_bar] = [bar for bar in turn["bars"] if bar["kind"] == "tool"]
        assert float(longest.get_attribute("data-duration")) == tool_bar["duration"]
        assert tool_bar["duration"] >= SLOW
        shown = f"{tool_bar['duration'] * 1000:.0f} ms"
        assert shown in text_of(browser, ".turn svg")
        [durations] = data["histograms"]["tool_duration"]
        assert durations["sum"] == tool_bar["duration"]  # one call: the same measurement
        assert [bar["kind"] for bar in turn["bars"]] == ["model", "tool", "model"]
        assert "finder" in text_of(browser, ".turn .sum")

        browser.find_element(By.ID, "view-metrics").click()
        row = wait.until(
            lambda d: d.find_element(By.CSS_SELECTOR, 'tr[data-histogram="tool_duration"]')
        )
        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        assert cells[0] == "tool call" and cells[-1] == "1"
        assert "model requests 2" in text_of(browser, "#insight .now")
        assert len(browser.find_elements(By.CSS_SELECTOR, ".chart polyline")) >= 4
        shot(browser, "9-metrics")

        browser.find_element(By.ID, "view-chat").click()
        wait.until(lambda d: d.find_element(By.ID, "composer").is_displayed())
        assert not browser.find_element(By.ID, "insight").is_displayed()
