"""The eval report in a real browser (headless Chromium): opened from a file, and in the dev UI.

An eval of the calculator agent on the scripted model (one case fails every
run, one every other run) is written as HTML and as JSON. The test reads the
numbers back from what the browser shows and checks them against the report:
the headline cards, the bar per case, the case table, and a failing run's
conversation once its ``<details>`` is opened. The same report then renders
in the dev UI's Evals view. Screenshots go where test_web_browser.py puts them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import Agent, LlmClient, Runtime, TestModel
from agent_smith.cli.demo_tools import CalculatorTool
from agent_smith.evals import Case, Contains, Dataset, EvalReport, ExpectedCall, ToolCalls, evaluate
from agent_smith.evals.table import percent
from agent_smith.llm.request import LlmRequest
from agent_smith.llm.testing import Reply, call
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.support.browser import WAIT, shot
from tests.support.llm_server import ScriptedLlmServer
from tests.support.web import factory

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CASES = Dataset(
    (
        Case("add", "What is 2+3?", expected="5"),
        Case("mul", "What is 6*7?", expected="42"),
        Case("flaky", "What is 9-4?", expected="5"),
        Case("wrong", "What is 1+1?", expected="3"),
    ),
    evaluators=(Contains(), ToolCalls((ExpectedCall("calculator"),))),
    name="calculator <browser>",
)


@pytest.fixture
def report(tmp_path: Path, runtime: Runtime) -> EvalReport:
    flips = itertools.count()

    def respond(request: LlmRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "tool":
            return f"The answer is {last.content}."
        expression = str(last.content).removeprefix("What is ").removesuffix("?")
        if expression == "9-4" and next(flips) % 2:
            return "I think it is 6."  # no tool, wrong: the flaky case's odd runs
        return call("calculator", expression=expression)

    def make() -> Agent:
        return Agent(TestModel(respond=respond), tools=[CalculatorTool()], runtime=runtime)

    made = evaluate(CASES, make, repeat=2, concurrency=1)
    assert [c.passes for c in made.cases] == [2, 2, 1, 0]
    return made


def metric(driver: Any, name: str) -> tuple[str, float]:
    element = driver.find_element(By.CSS_SELECTOR, f'[data-metric="{name}"]')
    return element.text, float(element.get_attribute("data-value"))


def check_numbers(driver: Any, report: EvalReport) -> None:
    """What a person sees on the page is the report's numbers."""
    assert metric(driver, "pass_rate") == (percent(report.pass_rate), report.pass_rate)
    assert metric(driver, "pass_at_k") == (percent(report.pass_at_k), report.pass_at_k)
    assert metric(driver, "pass_hat_k") == (percent(report.pass_hat_k), report.pass_hat_k)
    assert metric(driver, "runs")[1] == 8 and metric(driver, "cases")[1] == 4
    bars = driver.find_elements(By.CSS_SELECTOR, "g[data-case]")
    shown = {b.get_attribute("data-case"): float(b.get_attribute("data-value")) for b in bars}
    assert shown == {c.id: c.pass_rate for c in report.cases}
    rows = driver.find_elements(By.CSS_SELECTOR, "tr[data-case]")
    assert [r.text.split()[:3] for r in rows] == [
        [c.id, f"{c.passes}/{len(c.runs)}", percent(c.pass_rate)] for c in report.cases
    ]


def test_the_html_report_shows_its_numbers_and_failing_conversations(
    report: EvalReport,
    tmp_path: Path,
    browser: Any,
) -> None:
    page = tmp_path / "report.html"
    report.save(page)
    browser.get(page.as_uri())  # from the file system: no server
    assert browser.title == "Eval report: calculator <browser>"
    check_numbers(browser, report)
    failing = browser.find_elements(By.CSS_SELECTOR, "details[data-failing]")
    assert sorted(f.get_attribute("data-failing") for f in failing) == ["flaky", "wrong", "wrong"]
    wrong = failing[-1]
    assert "What is 1+1?" not in wrong.text  # closed: only its summary shows
    wrong.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(browser, WAIT).until(lambda d: "What is 1+1?" in wrong.text)
    assert "calculator" in wrong.text and "The answer is 2." in wrong.text
    assert "contains: fail" in wrong.text
    shot(browser, "eval-report")


@pytest.fixture
def dev_ui(
    report: EvalReport, tmp_path: Path, llm_server: ScriptedLlmServer, runtime: Runtime
) -> Iterator[str]:
    folder = tmp_path / "reports"
    folder.mkdir()
    report.save(folder / "calculator.json")
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    app = WebApp(factory(llm), sessions=tmp_path / "c.db", eval_reports=folder)
    with WebServer(app).start() as server:
        yield server.url


def test_the_dev_ui_shows_the_reports_of_its_folder(
    report: EvalReport,
    dev_ui: str,
    browser: Any,
) -> None:
    wait = WebDriverWait(browser, WAIT)
    browser.get(dev_ui + "/")
    wait.until(lambda d: d.find_element(By.ID, "view-evals").is_displayed())
    assert not browser.find_element(By.ID, "view-metrics").is_displayed()  # no collector
    browser.find_element(By.ID, "view-evals").click()
    wait.until(lambda d: "calculator.json" in d.find_element(By.ID, "insight").text)
    assert "pass rate 62.5%, 4 cases × 2" in browser.find_element(By.ID, "insight").text
    frame = wait.until(lambda d: d.find_element(By.ID, "eval-report"))
    browser.switch_to.frame(frame)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-metric="pass_rate"]'))
    check_numbers(browser, report)
    browser.switch_to.default_content()
    shot(browser, "eval-dev-ui")
