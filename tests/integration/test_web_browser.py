"""The dev UI in a real browser: headless Chromium (Debian chromium + chromium-driver), selenium.

Against the scripted LLM server: send a message, watch its text stream in and a
tool card appear, approve a call, reload and find the conversation; drop and
paste images, send one, see the image a tool returns, reload and see both. Any error in
the browser's console (a failed request, a script error) fails the test. Each step
leaves a screenshot (tests/support/browser.py).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from agent_smith import LlmClient, Runtime, SqliteEventLog
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.support.browser import WAIT, shot
from tests.support.llm_server import Calls, Chunks, ScriptedLlmServer, Text, sse_frames
from tests.support.media import PDF, b64, png
from tests.support.resume import gated_text, model_requested, running_worker
from tests.support.web import CHART, NOTES, closing_watched, draw_chart, factory
from tests.support.wsgi_servers import gunicorn, wait_for_workers

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


def open_page(driver: Any, url: str) -> Any:
    """Open the dev UI at ``url``; a wait on the driver for the steps after."""
    wait = WebDriverWait(driver, WAIT)
    driver.get(url + "/")
    wait.until(lambda d: d.find_element(By.ID, "input").is_displayed())
    return wait


def ask(driver: Any, text: str) -> None:
    box = driver.find_element(By.ID, "input")
    box.send_keys(text)
    driver.find_element(By.ID, "send").click()


def test_the_dev_ui_streams_shows_tools_approves_and_reloads(
    served: str, llm_server: ScriptedLlmServer, browser: Any
) -> None:
    NOTES.clear()
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
    wait = open_page(browser, served)
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
    with WebServer(recording).start() as server:
        wait = open_page(browser, server.url)
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


STORY = "Once upon a time a connection was cut and the page missed nothing."


def test_the_dev_ui_reconnects_when_its_connection_drops_and_shows_the_reply_once(
    no_thread_leak: None,
    llm_server: ScriptedLlmServer,
    tmp_path: Path,
    runtime: Runtime,
    browser: Any,
) -> None:
    """The reply's connection dies after its first word (as when the server in front is
    killed); the page reconnects after its last event id and the reply completes."""
    came_back = threading.Event()
    cut: list[str] = []

    def cut_after_first_word(body: Any) -> Iterator[bytes]:
        try:
            for chunk in body:
                yield chunk
                if b'"text-delta"' in chunk:
                    raise ConnectionResetError("the test cuts the reply's connection")
        finally:
            body.close()

    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    with (
        SqliteEventLog(tmp_path / "events.db") as log,
        WebApp(factory(llm), sessions=tmp_path / "c.db", streams=log) as app,
    ):

        def cutting(environ: dict[str, Any], start_response: Any) -> Any:
            path = environ["PATH_INFO"]
            if path.endswith("/stream"):
                came_back.set()  # the page reconnected: the model goes on
            body = app(environ, start_response)
            if environ["REQUEST_METHOD"] != "POST" or path != "/api/chat" or cut:
                return body
            cut.append(path)
            return cut_after_first_word(body)

        frames = list(sse_frames(Text(STORY), {}))
        llm_server.script(Chunks(*frames[:2], came_back, *frames[2:]))
        browser.allowed_errors = ("ERR_INCOMPLETE_CHUNKED_ENCODING", "ERR_CONNECTION")
        with WebServer(cutting).start() as server:
            wait = open_page(browser, server.url)
            ask(browser, "Tell me a story")
            wait.until(lambda d: STORY in text_of(d, ".msg.assistant .text"))
            wait.until(lambda d: d.find_element(By.ID, "send").is_enabled())
            shot(browser, "11-reconnected")
            assert cut and came_back.is_set()
            assert text_of(browser, ".msg.assistant .text") == STORY  # every word, once
            assert len(browser.find_elements(By.CSS_SELECTOR, ".msg.assistant")) == 1
            assert text_of(browser, ".msg.assistant .error") == ""
            assert len(llm_server.requests) == 1  # followed, not asked again


def test_the_stop_button_stops_a_turn_that_outlives_its_connection(
    no_thread_leak: None,
    llm_server: ScriptedLlmServer,
    tmp_path: Path,
    runtime: Runtime,
    browser: Any,
) -> None:
    """With streams a client leaving does not stop its turn (it may come back): Stop says so."""
    closed, gate = threading.Event(), threading.Event()
    words = list(sse_frames(Text("one two three four five six seven eight nine ten " * 5), {}))
    llm_server.script(Chunks(*words[:4], gate, *words[4:]))
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    with (
        SqliteEventLog(tmp_path / "events.db") as log,
        WebApp(closing_watched(llm, closed), sessions=tmp_path / "c.db", streams=log) as app,
        WebServer(app).start() as server,
    ):
        wait = open_page(browser, server.url)
        ask(browser, "Count for me")
        wait.until(lambda d: "one" in text_of(d, ".msg.assistant .text"))
        browser.find_element(By.ID, "stop").click()
        wait.until(lambda d: "stopped" in text_of(d, ".msg.assistant .error"))
        conversation = browser.execute_script("return conversation")
        deadline = time.monotonic() + WAIT
        while not (info := log.latest(f"local/{conversation}")) or not info.cancelled:
            assert time.monotonic() < deadline, "Stop did not ask the server to stop the turn"
            gate.wait(0.05)
        gate.set()  # the model goes on; the turn, asked to stop, ends at its next event
        assert closed.wait(WAIT)
        stored = log.read(info.stream, 0).events
        assert any("the turn was cancelled" in data for _, data in stored)


def test_a_reply_whose_worker_is_killed_ends_once_with_an_error_and_the_chat_goes_on(
    llm_server: ScriptedLlmServer, tmp_path: Path, browser: Any
) -> None:
    """gunicorn, two sync workers: the worker running the reply is killed mid-reply. The page
    reconnects to the other worker, which tells it the turn died (its words shown once, then
    the error); the next message is answered. (A turn that outlives its worker is a durable
    turn: the test after this one.)"""
    pytest.importorskip("gunicorn")
    gate = threading.Event()
    frames = list(sse_frames(Text("These words die with their worker."), {}))
    llm_server.script(Chunks(*frames[:2], gate, *frames[2:]), Text("Back again."))
    browser.allowed_errors = ("ERR_INCOMPLETE_CHUNKED_ENCODING", "ERR_CONNECTION", "ERR_EMPTY")
    with gunicorn(
        llm_url=llm_server.url,
        sessions=str(tmp_path / "c.db"),
        events=str(tmp_path / "events.db"),
        log=tmp_path / "gunicorn.log",
    ) as url:
        workers = wait_for_workers(url, 2)
        wait = open_page(browser, url)
        ask(browser, "Say something")
        wait.until(lambda d: "These" in text_of(d, ".msg.assistant .text"))
        idle = requests.get(f"{url}/api/conversations", timeout=WAIT).headers["X-Worker-Pid"]
        (runner,) = workers - {idle}  # a sync worker holding a stream answers nothing else
        os.kill(int(runner), signal.SIGKILL)
        wait.until(lambda d: "stopped before the end" in text_of(d, ".msg.assistant .error"))
        wait.until(lambda d: d.find_element(By.ID, "send").is_enabled())
        shot(browser, "12-worker-killed")
        assert text_of(browser, ".msg.assistant .text").count("These") == 1
        assert "worker." not in text_of(browser, ".msg.assistant .text")
        gate.set()
        ask(browser, "Again")
        wait.until(lambda d: "Back again." in text_of(d, ".msg.assistant .text"))


def test_a_durable_reply_whose_worker_is_killed_completes_on_screen_once(
    llm_server: ScriptedLlmServer, tmp_path: Path, browser: Any
) -> None:
    """gunicorn, two sync workers, durable chat turns: the worker running the turn is killed
    while the model request is in flight. The page reconnects to another worker, which takes
    the turn over: the reply completes on screen, once, with no error; a reload shows the
    conversation once."""
    pytest.importorskip("gunicorn")
    pytest.importorskip("dbos")
    gate = threading.Event()
    llm_server.script(gated_text("Lost with its worker.", gate), Text(STORY))
    browser.allowed_errors = ("ERR_INCOMPLETE_CHUNKED_ENCODING", "ERR_CONNECTION", "ERR_EMPTY")
    durable = str(tmp_path / "turns.sqlite")
    with gunicorn(
        llm_url=llm_server.url,
        sessions=str(tmp_path / "c.db"),
        durable=durable,
        log=tmp_path / "gunicorn.log",
    ) as url:
        wait = open_page(browser, url)
        ask(browser, "Tell me a story")
        model_requested(llm_server, 1)  # the model request is in flight
        os.kill(running_worker(durable), signal.SIGKILL)
        gate.set()
        wait.until(lambda d: STORY in text_of(d, ".msg.assistant .text"))
        wait.until(lambda d: d.find_element(By.ID, "send").is_enabled())
        shot(browser, "13-durable-worker-killed")
        assert text_of(browser, ".msg.assistant .text") == STORY  # nothing lost, nothing twice
        assert len(browser.find_elements(By.CSS_SELECTOR, ".msg.assistant")) == 1
        assert text_of(browser, ".msg.assistant .error") == ""
        assert len(llm_server.requests) == 2  # asked again once, by the turn taken over
        browser.refresh()
        wait.until(lambda d: STORY in text_of(d, ".msg.assistant .text"))
        assert text_of(browser, ".msg.assistant .text") == STORY
