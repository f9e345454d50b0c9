"""A real browser for the tests: headless Chromium (Debian chromium + chromium-driver) via selenium.

The ``browser`` fixture fails its test if the browser's console shows an error
(a failed request, a script error). :func:`shot` leaves a screenshot in
``$AGENT_SMITH_ARTIFACTS/web-ui`` (default ``.artifacts/web-ui`` in the repository).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("AGENT_SMITH_ARTIFACTS", ROOT / ".artifacts")) / "web-ui"
#: Seconds a browser test waits for what it expects on screen.
WAIT = 30


def _require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        pytest.skip(f"{program} missing: apt-get install -y chromium chromium-driver")
    return path


@pytest.fixture
def browser() -> Iterator[Any]:
    """A headless Chromium driven by selenium, quit after the test.

    A test that expects some console errors (a connection it cuts) names them:
    ``browser.allowed_errors = ("ERR_CONNECTION",)``.
    """
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = _require("chromium")
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1280,860",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=_require("chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
        allowed = getattr(driver, "allowed_errors", ())  # a test's own, named: a cut connection
        errors = [
            entry
            for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE" and not any(a in entry["message"] for a in allowed)
        ]
        assert errors == [], "the browser console shows errors"
    finally:
        driver.quit()


def shot(driver: Any, name: str) -> None:
    """Save a screenshot of the page as ``name``.png among the artifacts."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
