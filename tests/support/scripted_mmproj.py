"""A tiny multimodal projector for the scripted test model: llama.cpp takes images with it.

llama.cpp's server accepts OpenAI ``image_url`` parts only when it was
started with a projector (``mmproj``) whose output width matches the text
model's embeddings. No vision model small enough for a test is published as
a package, so :func:`build` writes one with the ``gguf`` package's
``GGUFWriter``, as :mod:`tests.support.scripted_model` writes the text model:
a SigLIP-style encoder (one block, 16 dimensions, zero weights) behind a
Gemma 3 projector (``clip.projector_type = "gemma3"``), whose output has the
scripted model's 32 dimensions. It sees nothing: every image becomes the same
few zero embeddings, so the model's reply is its scripted text. What it
proves is the path: the server decodes the image (a file that is no image is
refused), the encoder runs, and the image's tokens count in the prompt
(``usage.prompt_tokens`` grows by :data:`IMAGE_TOKENS` per image).

An image is resized to :data:`IMAGE_SIZE` square pixels, cut into patches of
:data:`PATCH_SIZE`, and pooled by :data:`MERGE` on each side: 2 x 2 = 4
embeddings, between the projector's begin and end markers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.scripted_model import EMBED, cached_file, gguf_file

#: The encoder's width and feed-forward width: as small as llama.cpp allows.
VISION_EMBED = 16
IMAGE_SIZE = 56
PATCH_SIZE = 14
MERGE = 2
#: Embeddings one image adds to the prompt (its markers add a few tokens more).
IMAGE_TOKENS = (IMAGE_SIZE // PATCH_SIZE // MERGE) ** 2

FILE_PREFIX = "agent-smith-scripted-mmproj"


def cached_path(cache_dir: Path | None = None) -> Path:
    """Where :func:`ensure_scripted_mmproj` keeps the projector this builder writes."""
    return cached_file(__file__, FILE_PREFIX, cache_dir)


def ensure_scripted_mmproj(cache_dir: Path | None = None) -> Path:
    """The projector's path, written first when this version of the builder has not been run."""
    path = cached_path(cache_dir)
    if not path.is_file():
        build(path)
    return path


def build(path: Path) -> None:
    """Write the projector to ``path`` (atomically: a partial file is never left)."""
    with gguf_file(path, "clip") as writer:
        writer.add_string("clip.projector_type", "gemma3")
        writer.add_bool("clip.has_text_encoder", False)
        writer.add_bool("clip.has_vision_encoder", True)
        writer.add_bool("clip.has_llava_projector", False)
        writer.add_bool("clip.use_gelu", True)
        for key, value in (
            ("image_size", IMAGE_SIZE),
            ("patch_size", PATCH_SIZE),
            ("embedding_length", VISION_EMBED),
            ("feed_forward_length", VISION_EMBED),
            ("projection_dim", EMBED),
            ("block_count", 1),
            ("attention.head_count", 1),
            ("projector.scale_factor", MERGE),
        ):
            writer.add_uint32(f"clip.vision.{key}", value)
        writer.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
        writer.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
        writer.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
        for name, array in _weights().items():
            writer.add_tensor(name, array)


def _weights() -> dict[str, np.ndarray]:
    width, patches = VISION_EMBED, (IMAGE_SIZE // PATCH_SIZE) ** 2
    zeros, ones = np.zeros, np.ones
    weights = {
        "v.patch_embd.weight": zeros((width, 3, PATCH_SIZE, PATCH_SIZE), np.float32),
        "v.patch_embd.bias": zeros(width, np.float32),
        "v.position_embd.weight": zeros((patches, width), np.float32),
        "v.post_ln.weight": ones(width, np.float32),
        "v.post_ln.bias": zeros(width, np.float32),
        "mm.soft_emb_norm.weight": ones(width, np.float32),
        "mm.input_projection.weight": zeros((width, EMBED), np.float32),
    }
    for name in ("attn_q", "attn_k", "attn_v", "attn_out", "ffn_up", "ffn_down"):
        weights[f"v.blk.0.{name}.weight"] = zeros((width, width), np.float32)
        weights[f"v.blk.0.{name}.bias"] = zeros(width, np.float32)
    for norm in ("ln1", "ln2"):
        weights[f"v.blk.0.{norm}.weight"] = ones(width, np.float32)
        weights[f"v.blk.0.{norm}.bias"] = zeros(width, np.float32)
    return weights
