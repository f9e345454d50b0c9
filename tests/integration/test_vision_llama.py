"""Images to llama.cpp's own server: a vision model's projector (``mmproj``), OpenAI image parts.

The server is real (``LocalLlamaServer``, xllamacpp) and so is the path: the
agent sends the image as an ``image_url`` part with a ``data:`` URL, the
server decodes it, its projector encodes it and the image's tokens enter the
prompt. The model is the scripted test model with a scripted projector
(tests/support/scripted_mmproj.py): no vision model small enough for a test
is published as a package, so what it "sees" is not tested (docs/limitations.md),
only that the image arrived: the reply is the scripted one, and the prompt
grows by the image's tokens.
"""

from __future__ import annotations

import pytest

from agent_smith import (
    Agent,
    ImagePart,
    LlmApiError,
    LlmClient,
    LocalLlamaServer,
    Runtime,
    SamplingParams,
    TextPart,
    UserMessage,
)
from tests.support.media import png
from tests.support.scripted_mmproj import IMAGE_TOKENS

pytestmark = pytest.mark.usefixtures("no_thread_leak")

REPLY = "Hello from the tiny test model."


def ask(server: LocalLlamaServer, runtime: Runtime, *images: bytes) -> tuple[str, int]:
    """One question (with ``images``) to a fresh agent: its answer and the prompt's tokens."""
    llm = LlmClient(
        server.endpoint, "scripted", runtime=runtime, default_sampling=SamplingParams(temperature=0)
    )
    pictures = (ImagePart("image/png", data=image) for image in images)
    question = (TextPart("What is in this picture?"), *pictures)
    with Agent(llm, runtime=runtime) as agent:
        answer = agent.send(UserMessage(question))
    assert answer.usage is not None
    return answer.content, answer.usage.prompt


def test_llama_cpp_with_a_projector_takes_images_as_openai_image_parts(
    vision_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    text_only = ask(vision_llama, runtime)
    one = ask(vision_llama, runtime, png(rgb=(200, 30, 30)))
    two = ask(vision_llama, runtime, png(rgb=(200, 30, 30)), png(40, 20, rgb=(0, 90, 200)))
    assert (text_only[0], one[0], two[0]) == (REPLY, REPLY, REPLY)
    assert one[1] >= text_only[1] + IMAGE_TOKENS
    assert two[1] >= one[1] + IMAGE_TOKENS


def test_bytes_that_are_no_image_are_refused_by_llama_cpp_with_a_typed_error(
    vision_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    llm = LlmClient(vision_llama.endpoint, "scripted", runtime=runtime)
    broken = ImagePart("image/png", data=b"\x89PNG\r\n\x1a\n" + b"not an image at all")
    with Agent(llm, runtime=runtime) as agent, pytest.raises(LlmApiError) as caught:
        agent.send(UserMessage((TextPart("What is this?"), broken)))
    assert caught.value.http_status == 400
