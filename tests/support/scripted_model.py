"""The scripted test model: a tiny GGUF whose hand-set weights make llama.cpp's output scripted.

:func:`build` writes it with the ``gguf`` package's ``GGUFWriter`` (the
``test`` extra); :func:`ensure_scripted_model` builds it once into the model
cache, under a name keyed by the hash of this file, so a change here builds
a new one. Served by llama.cpp with ``--jinja`` at ``temperature: 0``:

* no tools in the request: ``Hello from the tiny test model.``, finish ``stop``;
* tools and no tool result yet: one call to one of the tools (with one tool
  offered, that tool) with every string argument ``"Paris"``, finish
  ``tool_calls``; streamed, the arguments arrive in many small fragments;
* after a ``tool`` message: the text reply again. Never two calls in a turn.

How: one llama block, 32 dimensions, the Qwen2 tokenizer and the tool-aware
Qwen2.5 chat template (read from the default local model's GGUF, which the
test run fetches anyway: no other download). The residual stream holds

* a constant dimension (every token), and one dimension per scripted token
  (``Hello``, `` from``, ... ``Paris``, ``<tool_call>``); every other token
  sets a shared "other" dimension, so every embedding has the same norm;
* two attention heads, each a detector: head 0 attends only to the token
  ``tools`` (the template's ``<tools>`` block, present when tools are
  offered), head 1 only to ``_response`` (``<tool_response>``, present after
  a tool result); each writes 1 into its own dimension when its token is
  anywhere before, else 0. Their query and key live in the last rotary
  pair of the head, which a huge rope base keeps still;
* a few dimensions of a fixed pseudo-random identity per token, which no
  logit reads: they only make embeddings (``/v1/embeddings``) differ by text.

The output matrix is a bigram table: each scripted token votes for its
successor (``Hello`` -> `` from`` -> ... -> ``.`` -> ``<|im_end|>``; an
opening quote -> ``Paris`` -> ``"``; ``<tool_call>`` -> newline;
``</tool_call>`` -> ``<|im_end|>``). After the prompt's last newline,
``Hello`` and ``<tool_call>`` compete, swayed by the two detectors. Where no
successor is scripted, the constant dimension ranks :data:`FALLBACK`
(``"`` > ``{`` > ``}`` > ``</tool_call>`` > ``:`` > ``,`` > ``<|im_end|>``):
inside a tool call llama.cpp's grammar allows only valid JSON for the
offered tools, and these preferences walk it (``{"name":"get_weather",
"arguments":{"city":"Paris"}}``, then ``</tool_call>``, not a second call).
Every other token ties at zero, and llama.cpp breaks the tie among those the
grammar allows: tool names and keys arrive a few characters at a time. With
several tools offered, the tie picks the tool (the first, in the cases
tried); tests offer one.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: The model's dimensions: small, as the vocabulary (151,936 rows) dominates the size.
EMBED = 32
HEADS = 2
HEAD_DIM = EMBED // HEADS
#: A rope base so large that the last rotary pair of a head turns by ~1e-7 rad at 32k tokens.
ROPE_BASE = 1e12
CONTEXT = 32768

#: Scripted successors: the current token's text -> the next token's text. Every token
#: that opens a JSON string (see OPENS_STRING) is followed by ``Paris``.
SUCCESSORS = {
    "Hello": "Ġfrom",
    "Ġfrom": "Ġthe",
    "Ġthe": "Ġtiny",
    "Ġtiny": "Ġtest",
    "Ġtest": "Ġmodel",
    "Ġmodel": ".",
    ".": "<|im_end|>",
    "Paris": '"',
    "<tool_call>": "Ċ",
    "</tool_call>": "<|im_end|>",
}
#: Tokens that end by opening a JSON string: a quote after blanks, or after a colon
#: (``"``, `` "``, ``:"``, ``":"``, `` :"``), in the tokenizer's byte-level spelling.
OPENS_STRING = re.compile(r'[ĠĊĉ]*"|"?[ĠĊĉ]*:[ĠĊĉ]*"')
#: The prompt ends with ``<|im_start|>assistant`` and this newline: the reply starts here.
START = "Ċ"
#: Where nothing is scripted: these, in this order, above every other token. Single
#: characters of JSON, so a grammar-bound reply is written ``{"key":"Paris"}`` and
#: never with a merged token that would open a string out of turn (`` :",``).
FALLBACK = ('"', "{", "}", "</tool_call>", ":", ",", "<|im_end|>")
#: The detectors' tokens: tools offered, a tool result seen.
TOOLS, RESPONSE = "tools", "_response"

#: Logit weights (before the output norm's scale of ~3): a scripted successor beats
#: every fallback; a detector moves the start between text and a call.
SUCCESSOR_LOGIT = 16.0
FALLBACK_TOP = 12.0
DETECTOR_LOGIT = 4.0
TEXT_FIRST = 1.0  # with both detectors or neither, the text wins the start
#: Attention score of a detector's token (others score 0): all weight on it in 32k tokens.
DETECTOR_SCORE = 30.0

#: Name of the built file in the model cache; the builder's hash keeps versions apart.
FILE_PREFIX = "agent-smith-scripted"


@dataclass(frozen=True)
class BuildReport:
    """What :func:`build` wrote and what it cost."""

    path: Path
    seconds: float
    size: int


def cached_file(builder: str, prefix: str, cache_dir: Path | None = None) -> Path:
    """Where what the builder module at path ``builder`` writes is kept in the model cache.

    The name ends with the first 12 hex digits of the builder's sha256: a change to the
    builder builds anew.
    """
    from agent_smith.cli.models import model_cache_dir

    digest = hashlib.sha256(Path(builder).read_bytes()).hexdigest()[:12]
    return (cache_dir or model_cache_dir()) / f"{prefix}-{digest}.gguf"


@contextmanager
def gguf_file(path: Path, architecture: str) -> Iterator[Any]:
    """A ``GGUFWriter`` to fill; its file appears at ``path`` whole, never partial."""
    import gguf

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    writer = gguf.GGUFWriter(partial, architecture)
    yield writer
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.replace(path)


def cached_path(cache_dir: Path | None = None) -> Path:
    """Where :func:`ensure_scripted_model` keeps the model built by this version of the builder."""
    return cached_file(__file__, FILE_PREFIX, cache_dir)


def ensure_scripted_model(cache_dir: Path | None = None) -> Path:
    """The built model's path, building it first when this version has not been built."""
    path = cached_path(cache_dir)
    if not path.is_file():
        build(path)
    return path


def build(path: Path, tokenizer_source: Path | None = None) -> BuildReport:
    """Write the scripted model to ``path`` (atomically: a partial file is never left).

    ``tokenizer_source`` is a GGUF with the Qwen2 tokenizer and the Qwen2.5
    chat template; by default the demo's local model, fetched once if missing.
    """
    import gguf

    from agent_smith.cli.models import ensure_default_model

    started = time.perf_counter()
    source = gguf.GGUFReader(tokenizer_source or ensure_default_model())
    tokenizer = {key: field for key, field in source.fields.items() if key.startswith("tokenizer.")}
    vocab: list[str] = tokenizer["tokenizer.ggml.tokens"].contents()
    ids = {text: n for n, text in enumerate(vocab)}
    tensors = _weights(ids)

    with gguf_file(path, "llama") as writer:
        writer.add_name("agent-smith scripted test model")
        writer.add_context_length(CONTEXT)
        writer.add_embedding_length(EMBED)
        writer.add_block_count(1)
        writer.add_feed_forward_length(EMBED)
        writer.add_head_count(HEADS)
        writer.add_head_count_kv(HEADS)
        writer.add_rope_dimension_count(HEAD_DIM)
        writer.add_rope_freq_base(ROPE_BASE)
        writer.add_layer_norm_rms_eps(1e-6)
        writer.add_vocab_size(len(vocab))
        writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
        for key, field in tokenizer.items():
            main, *sub = field.types
            writer.add_key_value(key, field.contents(), main, sub[0] if sub else None)
        q8 = gguf.GGMLQuantizationType.Q8_0
        for name, array in tensors.items():
            if array.ndim == 2 and array.shape[0] == len(vocab):  # the two vocabulary tables
                writer.add_tensor(name, gguf.quants.quantize(array, q8), raw_dtype=q8)
            else:
                writer.add_tensor(name, array)
    return BuildReport(path, time.perf_counter() - started, path.stat().st_size)


def _weights(ids: dict[str, int]) -> dict[str, np.ndarray[Any, Any]]:
    """Every tensor of the model, as float32 arrays in GGUF's (rows = outputs) layout."""
    vocab = len(ids)
    # One residual dimension per input feature: the constant, each scripted token, the
    # string openers, the detectors' tokens and "other" (every token not yet named).
    features: dict[str, list[int]] = {"const": list(range(vocab))}
    features |= {text: [ids[text]] for text in (*SUCCESSORS, START, TOOLS, RESPONSE)}
    features["opens_string"] = [n for text, n in ids.items() if OPENS_STRING.fullmatch(text)]
    named = {n for name, rows in features.items() if name != "const" for n in rows}
    features["other"] = [n for n in range(vocab) if n not in named]
    dim = {name: n for n, name in enumerate([*features, "has_tools", "has_response"])}
    identity = range(len(dim), EMBED)
    if len(identity) < 4:
        raise ValueError("too few dimensions left for the tokens' identity")

    embed = np.zeros((vocab, EMBED), np.float32)
    for name, rows in features.items():
        embed[rows, dim[name]] = 1.0
    rng = np.random.default_rng(20261207)
    noise = rng.standard_normal((vocab, len(identity))).astype(np.float32)
    embed[:, identity.start :] = noise / np.linalg.norm(noise, axis=1, keepdims=True)
    # Every row has norm sqrt(3) (constant, one feature, identity): after the block's
    # RMS norm each set dimension reads `unit`.
    unit = float(np.sqrt(EMBED / 3.0))

    # Head h's query and key in its dimension HEAD_DIM - 2 (the last rotary pair, still);
    # its value (dimension 0 of the head) reads 1 on its token; the output adds it to `out`.
    q = np.zeros((EMBED, EMBED), np.float32)
    k = np.zeros((EMBED, EMBED), np.float32)
    v = np.zeros((EMBED, EMBED), np.float32)
    o = np.zeros((EMBED, EMBED), np.float32)
    gain = float(np.sqrt(DETECTOR_SCORE * np.sqrt(HEAD_DIM))) / unit  # q.k/sqrt(d) = score
    for head, (token, out) in enumerate(((TOOLS, "has_tools"), (RESPONSE, "has_response"))):
        base = head * HEAD_DIM
        q[base + HEAD_DIM - 2, dim["const"]] = gain
        k[base + HEAD_DIM - 2, dim[token]] = gain
        v[base, dim[token]] = 1.0 / unit
        o[dim[out], base] = 1.0

    output = np.zeros((vocab, EMBED), np.float32)
    for text, successor in SUCCESSORS.items():
        output[ids[successor], dim[text]] = SUCCESSOR_LOGIT
    output[ids["Paris"], dim["opens_string"]] = SUCCESSOR_LOGIT
    for rank, text in enumerate(FALLBACK):
        output[ids[text], dim["const"]] = FALLBACK_TOP - rank
    hello, call = ids["Hello"], ids["<tool_call>"]
    output[hello, dim[START]] = SUCCESSOR_LOGIT
    output[call, dim[START]] = SUCCESSOR_LOGIT - TEXT_FIRST
    output[hello, dim["has_tools"]] = -DETECTOR_LOGIT
    output[hello, dim["has_response"]] = DETECTOR_LOGIT
    output[call, dim["has_tools"]] = DETECTOR_LOGIT
    output[call, dim["has_response"]] = -DETECTOR_LOGIT

    ones = np.ones(EMBED, np.float32)
    zeros = np.zeros((EMBED, EMBED), np.float32)
    return {
        "token_embd.weight": embed,
        "output_norm.weight": ones,
        "output.weight": output,
        "blk.0.attn_norm.weight": ones,
        "blk.0.attn_q.weight": q,
        "blk.0.attn_k.weight": k,
        "blk.0.attn_v.weight": v,
        "blk.0.attn_output.weight": o,
        "blk.0.ffn_norm.weight": ones,
        "blk.0.ffn_gate.weight": zeros,
        "blk.0.ffn_up.weight": zeros,
        "blk.0.ffn_down.weight": zeros,
    }
