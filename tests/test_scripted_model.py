"""The scripted test model's weights, run through the llama forward pass in numpy.

The integration tests serve the built file with llama.cpp; these check the
script itself on a small vocabulary, in milliseconds: greedy decoding (no
grammar) after the prompt's last newline writes the text without tools or
after a tool result, and starts a call when tools are offered; a string
opener is followed by ``Paris``. The big tables go through Q8_0 and back, as
in the file.
"""

from __future__ import annotations

from typing import Any

import pytest

gguf = pytest.importorskip("gguf")  # the test extra; numpy comes with it

import numpy as np  # noqa: E402

from tests.support.scripted_model import EMBED, HEAD_DIM, HEADS, ROPE_BASE, _weights  # noqa: E402

VOCAB = [
    *'!"#:{},',
    *("Ċ", "Ġ", "Hello", "Ġfrom", "Ġthe", "Ġtiny", "Ġtest", "Ġmodel", ".", "Paris"),
    *("<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>", "tools", "_response"),
    *(':"', '":"', 'Ġ"', 'Ġ:"', '""', "<", ">", "tool", "user", "assistant", "system"),
    *("What", "Ġis", "Ġweather", "?", "Ġsunny", "Sunny", "ĠParis"),
]
IDS = {text: n for n, text in enumerate(VOCAB)}
TEXT = ["Hello", "Ġfrom", "Ġthe", "Ġtiny", "Ġtest", "Ġmodel", ".", "<|im_end|>"]
ASK = ["<|im_start|>", "user", "Ċ", "What", "Ġis", "Ġweather", "?", "<|im_end|>", "Ċ"]
REPLY = ["<|im_start|>", "assistant", "Ċ"]
TOOLS = ["<|im_start|>", "system", "Ċ", "<", "tools", ">", "Ċ", "<|im_end|>", "Ċ"]
RESULT = ["<|im_start|>", "user", "Ċ", "<", "tool", "_response", ">", "Ġsunny", "<|im_end|>"]


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray[Any, Any]]:
    tensors = _weights(IDS)
    q8 = gguf.GGMLQuantizationType.Q8_0
    for name in ("token_embd.weight", "output.weight"):
        tensors[name] = gguf.quants.dequantize(gguf.quants.quantize(tensors[name], q8), q8)
    return tensors


def rms_norm(x: np.ndarray[Any, Any], gain: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    normed: np.ndarray[Any, Any] = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6)
    return normed * gain


def rope(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """llama.cpp's rope for llama (adjacent pairs), on (tokens, heads, HEAD_DIM)."""
    positions = np.arange(x.shape[0])[:, None, None]
    theta = positions * ROPE_BASE ** (-np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
    even, odd = x[..., 0::2], x[..., 1::2]
    turned = np.empty_like(x)
    turned[..., 0::2] = even * np.cos(theta) - odd * np.sin(theta)
    turned[..., 1::2] = even * np.sin(theta) + odd * np.cos(theta)
    return turned


def next_token(weights: dict[str, np.ndarray[Any, Any]], tokens: list[str]) -> str:
    """The greedy next token after ``tokens``: one llama block, as llama.cpp computes it."""
    w = weights
    x = w["token_embd.weight"][[IDS[t] for t in tokens]].astype(np.float64)
    h = rms_norm(x, w["blk.0.attn_norm.weight"])
    count = len(tokens)
    q = rope((h @ w["blk.0.attn_q.weight"].T).reshape(count, HEADS, HEAD_DIM))
    k = rope((h @ w["blk.0.attn_k.weight"].T).reshape(count, HEADS, HEAD_DIM))
    v = (h @ w["blk.0.attn_v.weight"].T).reshape(count, HEADS, HEAD_DIM)
    scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(HEAD_DIM)
    scores += np.triu(np.full((count, count), -np.inf), 1)
    attention = np.exp(scores - scores.max(axis=-1, keepdims=True))
    attention /= attention.sum(axis=-1, keepdims=True)
    mixed = np.einsum("hqk,khd->qhd", attention, v).reshape(count, EMBED)
    x = x + mixed @ w["blk.0.attn_output.weight"].T
    # The feed-forward weights are zero: it adds nothing.
    assert not w["blk.0.ffn_down.weight"].any()
    logits = rms_norm(x[-1], w["output_norm.weight"]) @ w["output.weight"].T
    return VOCAB[int(np.argmax(logits))]


def generate(weights: dict[str, np.ndarray[Any, Any]], prompt: list[str], limit: int) -> list[str]:
    tokens = list(prompt)
    for _ in range(limit):
        tokens.append(next_token(weights, tokens))
        if tokens[-1] == "<|im_end|>":
            break
    return tokens[len(prompt) :]


def test_without_tools_the_reply_is_the_text(weights: dict[str, np.ndarray[Any, Any]]) -> None:
    assert generate(weights, ASK + REPLY, 12) == TEXT


def test_with_tools_the_reply_starts_a_call(weights: dict[str, np.ndarray[Any, Any]]) -> None:
    # Past the newline, llama.cpp's grammar writes the call's JSON (the integration tests).
    assert generate(weights, TOOLS + ASK + REPLY, 2) == ["<tool_call>", "Ċ"]


def test_after_a_tool_result_the_reply_is_the_text_again(
    weights: dict[str, np.ndarray[Any, Any]],
) -> None:
    assert generate(weights, TOOLS + ASK + REPLY + RESULT + REPLY, 12) == TEXT
    assert generate(weights, ASK + RESULT + REPLY, 12) == TEXT  # a result, tools no more


@pytest.mark.parametrize("opener", ['"', ':"', '":"', 'Ġ"', 'Ġ:"'])
def test_a_string_opener_is_followed_by_paris_and_its_close(
    weights: dict[str, np.ndarray[Any, Any]], opener: str
) -> None:
    prompt = TOOLS + ASK + REPLY + ["<tool_call>", "Ċ", "{", opener]
    assert generate(weights, prompt, 2) == ["Paris", '"']


def test_every_token_has_its_own_embedding_of_the_same_norm() -> None:
    embed = _weights(IDS)["token_embd.weight"]
    assert np.allclose(np.linalg.norm(embed, axis=1), np.sqrt(3))
    assert len({row.tobytes() for row in embed}) == len(VOCAB)
