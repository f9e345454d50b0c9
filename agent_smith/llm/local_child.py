"""The llama.cpp server process that :class:`~agent_smith.LocalLlamaServer` starts.

It runs in a fresh interpreter (``sys.executable -c ...``) and imports
``xllamacpp`` only here. Protocol with the parent: one JSON config line on
stdin; one ``HANDSHAKE`` line on stdout with the listening address or the
error; then it serves until its stdin reaches EOF (the parent closed it or
died) and exits.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

#: Prefix of the one stdout line that answers the parent.
HANDSHAKE = "AGENT_SMITH_LLAMA "


def main() -> None:
    """Entry point of the server process: read the config, serve, exit at stdin EOF."""
    config = json.loads(sys.stdin.buffer.readline())
    try:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = config["model"]
        if hasattr(params, "hostnames"):  # newer xllamacpp: a list of addresses
            params.hostnames = ["127.0.0.1"]
        else:
            params.hostname = "127.0.0.1"
        params.port = config["port"]
        params.use_jinja = True
        # n_ctx is split between the slots: each gets ctx_size of its own.
        params.n_ctx = config["ctx_size"] * config["parallel"]
        params.n_parallel = config["parallel"]
        params.n_predict = config["max_tokens"] or -1  # -1: no cap
        if config["threads"]:
            params.cpuparams.n_threads = config["threads"]
            params.cpuparams_batch.n_threads = config["threads"]
        if config["api_key"]:
            params.api_keys = [config["api_key"]]
        for dotted, value in config["options"].items():
            *path, name = dotted.split(".")
            target = params
            for part in path:
                target = getattr(target, part)
            setattr(target, name, value)
        server = xllamacpp.Server(params)
        answer: dict[str, Any] = {"address": server.listening_address}
    except Exception as err:  # reported to the parent, which raises a typed error
        answer = {"error": f"{type(err).__name__}: {err}"}
    sys.stdout.write(HANDSHAKE + json.dumps(answer) + "\n")
    sys.stdout.flush()
    if "error" not in answer:
        sys.stdin.buffer.read()  # returns at EOF: the parent closed us or died
    # os._exit skips xllamacpp's destructor, which can hang right after a start;
    # the kernel frees the port and memory just the same.
    os._exit(0 if "error" not in answer else 1)
