"""The dev UI in a real browser: headless Chromium (Debian chromium + chromium-driver), selenium.

Against the scripted LLM server: send a message, watch its text stream in and a
tool card appear, approve a call, reload and find the conversation; drop and
paste images, send one, see the image a tool returns, reload and see both. Any error in
the browser's console (a failed request, a script error) fails the test. Each step
leaves a screenshot (tests/support/browser.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import LlmClient, Runtime
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.support.browser import WAIT, shot
from tests.support.llm_server import Calls, Chunks, ScriptedLlmServer, Text, sse_frames
from tests.support.media import PDF, b64, png
from tests.support.web import CHART, NOTES, closing_watched, draw_chart, factory

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture
def served(
    no_thread_leak: None, llm_server: ScriptedLlmServer, tmp_path: Path, runtime: Runtime
) -> Iterator[str]:
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    app = WebApp(factory(llm, tools=[draw_chart]), sessions=tmp_path / "c.db")
    with WebServer(app).start() as server:
        yield server.url


def text_of(driver: Any, css: str) -> str:
    return " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, css))


def ask(driver: Any, text: str) -> None:
    box = driver.find_element(By.ID, "input")
    box.send_keys(text)
    driver.find_element(By.ID, "send").click()


def test_the_dev_ui_streams_shows_tools_approves_and_reloads(
    served: str, llm_server: ScriptedLlmServer, browser: Any
) -> None:
    NOTES.clear()
    wait = WebDriverWait(browser, WAIT)
    gate = threading.Event()
    words = list(
        sse_frames(Text("It is sunny in Paris, enjoy the walk.", reasoning="Sunny, say so."), {})
    )
    llm_server.script(
        Calls(("get_weather", {"city": "Paris"})),
        Chunks(*words[:5], gate, *words[5:]),  # the reply pauses after "It is"
        Calls(("save_note", {"text": "buy bread"})),
        Text("Saved your note."),
    )
    browser.get(served + "/")
    wait.until(lambda d: d.find_element(By.ID, "input").is_displayed())
    shot(browser, "1-empty")

    ask(browser, "What is the weather in Paris?")
    wait.until(lambda d: "It is" in text_of(d, ".msg.assistant .text"))
    assert "enjoy" not in text_of(browser, ".msg.assistant .text")  # still streaming
    assert "get_weather" in text_of(browser, ".tool-card .name")
    assert "Sunny in Paris" in text_of(browser, ".tool-card .result")
    assert browser.find_element(By.ID, "stop").is_enabled()
    shot(browser, "2-streaming")
    gate.set()
    wait.until(lambda d: "enjoy the walk." in text_of(d, ".msg.assistant .text"))
    wait.until(lambda d: "tokens:" in text_of(d, ".usage"))
    assert "Sunny, say so." in browser.find_element(
        By.CSS_SELECTOR, "details.reasoning"
    ).get_attribute("textContent")
    shot(browser, "3-answered")

    ask(browser, "Save a note: buy bread")
    approve = wait.until(
        lambda d: d.find_element(By.CSS_SELECTOR, ".tool-card.waiting button.approve")
    )
    assert "buy bread" in text_of(browser, ".tool-card.waiting .args")
    wait.until(lambda d: approve.is_enabled())
    shot(browser, "4-approval")
    approve.click()
    wait.until(lambda d: "Saved your note." in text_of(d, ".msg.assistant .text"))
    assert "saved: buy bread" in text_of(browser, ".tool-card .result")
    assert NOTES == ["buy bread"]
    shot(browser, "5-approved")

    browser.refresh()
    wait.until(lambda d: "What is the weather in Paris?" in text_of(d, "#conversations li"))
    wait.until(lambda d: "Saved your note." in text_of(d, ".msg.assistant .text"))
    assert "It is sunny in Paris, enjoy the walk." in text_of(browser, ".msg.assistant .text")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".tool-card")) == 2
    assert "current" in browser.find_element(By.CSS_SELECTOR, "#conversations li").get_attribute(
        "class"
    )
    shot(browser, "6-reloaded")


def test_the_stop_button_cancels_the_turn(
    no_thread_leak: None,
    llm_server: ScriptedLlmServer,
    tmp_path: Path,
    runtime: Runtime,
    browser: Any,
) -> None:
    closed = threading.Event()
    environs: list[dict[str, Any]] = []
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    app = WebApp(closing_watched(llm, closed), sessions=tmp_path / "c.db")

    def recording(environ: dict[str, Any], start_response: Any) -> Any:
        environs.append(environ)
        return app(environ, start_response)

    resume, never = threading.Event(), threading.Event()
    words = list(sse_frames(Text("one two three four five six seven eight nine ten " * 20), {}))
    llm_server.script(Chunks(*words[:4], resume, *words[4:40], never, *words[40:]))
    wait = WebDriverWait(browser, WAIT)
    with WebServer(recording).start() as server:
        browser.get(server.url + "/")
        wait.until(lambda d: d.find_element(By.ID, "input").is_displayed())
        ask(browser, "Count for me")
        wait.until(lambda d: "one two" in text_of(d, ".msg.assistant .text"))
        browser.find_element(By.ID, "stop").click()
        wait.until(lambda d: "stopped" in text_of(d, ".msg.assistant .error"))
        shot(browser, "7-stopped")
        # waitress offers a flag, not an event: wait (bounded) until it saw the page leave.
        chat = next(e for e in environs if e["PATH_INFO"] == "/api/chat")
        deadline = time.monotonic() + WAIT
        while not chat["waitress.client_disconnected"]():
            assert time.monotonic() < deadline, "waitress did not notice the stop"
            resume.wait(0.01)
        resume.set()  # the model goes on; the app, seeing the client gone, cancels the turn
        assert closed.wait(WAIT), "the turn went on after Stop"
        assert not never.is_set()
        llm_server.script(Text("Fresh answer."))
        ask(browser, "Again")
        wait.until(lambda d: "Fresh answer." in text_of(d, ".msg.assistant .text"))


# A file given to the page as a drop or a paste would give it (a DataTransfer of one File).
GIVE_FILE = """
const [kind, name, type, base64] = arguments;
const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
const files = new DataTransfer();
files.items.add(new File([bytes], name, { type }));
if (kind === "drop") {
  document.querySelector("main").dispatchEvent(
    new DragEvent("drop", { dataTransfer: files, bubbles: true, cancelable: true }));
} else {
  document.getElementById("input").dispatchEvent(
    new ClipboardEvent("paste", { clipboardData: files, bubbles: true, cancelable: true }));
}
"""


def image_sources(driver: Any, css: str) -> list[str]:
    return [e.get_attribute("src") for e in driver.find_elements(By.CSS_SELECTOR, css)]


def test_the_dev_ui_sends_a_dropped_image_and_shows_the_image_a_tool_returns(
    served: str, llm_server: ScriptedLlmServer, browser: Any, tmp_path: Path
) -> None:
    red, green = png(96, 64, rgb=(200, 30, 30)), png(96, 64, rgb=(30, 160, 60))
    llm_server.script(Calls(("draw_chart", {"title": "red"})), Text("Here is your chart."))
    wait = WebDriverWait(browser, WAIT)
    browser.get(served + "/")
    wait.until(lambda d: d.find_element(By.ID, "input").is_displayed())

    browser.execute_script(GIVE_FILE, "drop", "red.png", "image/png", b64(red))
    wait.until(lambda d: len(image_sources(d, "#attached img")) == 1)
    browser.execute_script(GIVE_FILE, "paste", "green.png", "image/png", b64(green))
    wait.until(lambda d: len(image_sources(d, "#attached img")) == 2)
    (tmp_path / "notes.pdf").write_bytes(PDF)
    browser.find_element(By.ID, "file").send_keys(str(tmp_path / "notes.pdf"))  # Attach's input
    wait.until(lambda d: "notes.pdf" in text_of(d, "#attached .chip"))
    shot(browser, "8-attached")
    for name in ("green.png", "notes.pdf"):
        browser.find_element(By.CSS_SELECTOR, f'#attached .remove[title="Remove {name}"]').click()
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#attached .chip"))
    assert len(image_sources(browser, "#attached img")) == 1

    ask(browser, "Draw this as a chart.")
    wait.until(lambda d: "Here is your chart." in text_of(d, ".msg.assistant .text"))
    red_url, chart_url = f"data:image/png;base64,{b64(red)}", f"data:image/png;base64,{b64(CHART)}"
    assert image_sources(browser, ".msg.user img") == [red_url]
    assert image_sources(browser, ".msg.assistant .files img") == [chart_url]
    assert image_sources(browser, "#attached img") == []  # sent, so no longer waiting
    question = llm_server.requests[0]["messages"][-1]
    assert [p["image_url"]["url"] for p in question["content"] if p["type"] == "image_url"] == [
        red_url
    ]
    shot(browser, "9-images")

    browser.refresh()
    wait.until(lambda d: "Here is your chart." in text_of(d, ".msg.assistant .text"))
    assert image_sources(browser, ".msg.user img") == [red_url]
    assert image_sources(browser, ".msg.assistant .files img") == [chart_url]
    shot(browser, "10-images-reloaded")
