"""The example Django project (examples/django_project): its tests, gunicorn, a real browser.

Django's own database is a private PostgreSQL on loopback; the model is the
scripted LLM server. Django's settings are process-wide, so the project always
runs in processes of its own (``manage.py``, gunicorn's workers).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.browser import WAIT, shot
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.ports import free_port
from tests.support.wsgi_servers import serving

pytest.importorskip("django")
pytest.importorskip("gunicorn")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "django_project"
PASSWORDS = {"ada": "lovelace-1815", "bob": "babbage-1791"}


@pytest.fixture
def environment(
    postgres_url: str, postgres_server: Any, llm_server: ScriptedLlmServer
) -> dict[str, str]:
    """Django's database and the conversations: two databases on one PostgreSQL server."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": postgres_url,
        "AGENT_SMITH_SESSIONS": postgres_server.new_database(),
        "LLAMA_SERVER_URL": llm_server.url,
        "DJANGO_SECRET_KEY": "test-only-key",
    }


def manage(environment: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *argv],
        cwd=PROJECT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_projects_own_tests_pass_on_postgresql(environment: dict[str, str]) -> None:
    done = manage(environment, "test", "agentsite", "--noinput")
    assert done.returncode == 0, done.stderr
    assert "Ran 4 tests" in done.stderr


@pytest.fixture
def served(environment: dict[str, str]) -> Iterator[str]:
    """The project under gunicorn (two threaded workers) with users ada and bob."""
    assert manage(environment, "migrate", "--noinput").returncode == 0
    for name, password in PASSWORDS.items():
        made = manage(
            {**environment, "DJANGO_SUPERUSER_PASSWORD": password},
            *("createsuperuser", "--noinput", "--username", name, "--email", f"{name}@example.org"),
        )
        assert made.returncode == 0, made.stderr
    port = free_port()
    argv = ["gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "8"]
    argv += ["--worker-class", "gthread", "--no-control-socket", "agentsite.wsgi"]
    up = lambda url: wait_until_up(url + "/login/")  # noqa: E731
    with serving(argv, port=port, env=environment, ready=up, cwd=PROJECT) as url:
        yield url


def wait_until_up(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if requests.get(url, timeout=5).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        assert time.monotonic() < deadline, f"gunicorn did not answer at {url}"
        time.sleep(0.1)


def logged_in(url: str, user: str) -> requests.Session:
    """A requests session logged in through Django's login form."""
    client = requests.Session()
    client.get(f"{url}/login/", timeout=WAIT)
    form = {"username": user, "password": PASSWORDS[user]}
    form["csrfmiddlewaretoken"] = client.cookies["csrftoken"]
    done = client.post(
        f"{url}/login/", data=form, headers={"Referer": f"{url}/login/"}, timeout=WAIT
    )
    assert done.url == f"{url}/", done.text
    return client


def test_a_user_logs_in_and_chats_under_gunicorn_in_the_browser(
    served: str, llm_server: ScriptedLlmServer, browser: Any
) -> None:
    wait = WebDriverWait(browser, WAIT)
    llm_server.script(Calls(("get_weather", {"city": "Paris"})), Text("Sunny and 21 °C in Paris."))
    browser.get(served + "/")
    wait.until(lambda d: d.find_elements(By.ID, "id_username"))  # sent to the login form
    browser.find_element(By.ID, "id_username").send_keys("ada")
    browser.find_element(By.ID, "id_password").send_keys(PASSWORDS["ada"])
    browser.find_element(By.ID, "log-in").click()
    wait.until(lambda d: d.find_elements(By.ID, "chat")).pop().click()
    wait.until(lambda d: d.find_element(By.ID, "input").is_displayed())
    browser.find_element(By.ID, "input").send_keys("What is the weather in Paris?")
    browser.find_element(By.ID, "send").click()
    answer = ".msg.assistant .text"
    wait.until(
        lambda d: "21 °C" in " ".join(e.text for e in d.find_elements(By.CSS_SELECTOR, answer))
    )
    shot(browser, "django-answered")

    ada = requests.Session()
    ada.cookies.set("sessionid", browser.get_cookie("sessionid")["value"])
    (conversation,) = ada.get(f"{served}/agent/api/conversations", timeout=WAIT).json()
    mine = f"{served}/agent/api/conversations/{conversation['id']}"
    assert ada.get(mine, timeout=WAIT).status_code == 200
    bob = logged_in(served, "bob")
    assert bob.get(f"{served}/agent/api/conversations", timeout=WAIT).json() == []
    assert bob.get(mine, timeout=WAIT).status_code == 404
    assert requests.get(mine, timeout=WAIT).status_code == 401
