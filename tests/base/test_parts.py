"""Content parts: their checks, their stored JSON and the histories that carry them."""

from __future__ import annotations

import base64
import json

import pytest

from agent_smith import (
    AudioPart,
    ConfigError,
    DocumentPart,
    ImagePart,
    PartError,
    TextPart,
    ToolMessage,
    ToolResult,
    UserMessage,
    messages_from_json,
    messages_to_json,
)
from agent_smith.base.parts import content_text, image, sniff_media_type
from agent_smith.errors import ParseError

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PDF = b"%PDF-1.4\n%fake\n"
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "


def test_string_content_stays_a_plain_string_in_the_stored_history() -> None:
    stored = json.loads(messages_to_json([UserMessage("hi")]))
    assert stored == [{"role": "user", "content": "hi"}]


def test_history_round_trips_every_part_kind_in_order() -> None:
    parts = (
        TextPart("look"),
        ImagePart("image/png", data=PNG),
        ImagePart("image/jpeg", url="https://example.com/cat.jpg"),
        DocumentPart("application/pdf", data=PDF, name="report.pdf"),
        DocumentPart("text/plain", data=b"plain words"),
        AudioPart("audio/wav", data=WAV),
    )
    history = [
        UserMessage(parts),
        ToolMessage("call_1", "chart", (TextPart("the chart"), ImagePart("image/png", data=PNG))),
    ]
    text = messages_to_json(history)
    assert messages_from_json(text) == history
    stored = json.loads(text)
    assert stored[0]["content"][1] == {
        "type": "image",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
    assert stored[0]["content"][2]["url"] == "https://example.com/cat.jpg"


def test_corrupt_base64_in_a_stored_history_names_the_part() -> None:
    stored = [{"role": "user", "content": [{"type": "image", "media_type": "image/png"}]}]
    stored[0]["content"][0]["data"] = "iVBORw0KGgo!!!notbase64"
    with pytest.raises(PartError) as caught:
        messages_from_json(json.dumps(stored))
    assert caught.value.reason == "encoding"
    assert "history[0].content[0]" in caught.value.part


def test_a_stored_part_of_an_unknown_type_is_a_parse_error_naming_it() -> None:
    stored = [{"role": "tool", "tool_call_id": "c", "name": "t", "content": [{"type": "video"}]}]
    with pytest.raises(ParseError, match=r"history\[0\]\.content\[0\].*'video'"):
        messages_from_json(json.dumps(stored))


def test_a_media_part_takes_bytes_or_a_url_never_both() -> None:
    with pytest.raises(ConfigError, match="either data or url"):
        ImagePart("image/png", data=PNG, url="https://example.com/a.png")
    with pytest.raises(ConfigError, match="either data or url"):
        ImagePart("image/png")


def test_a_media_type_of_another_kind_is_refused() -> None:
    with pytest.raises(ConfigError, match="not one of image/"):
        ImagePart("application/pdf", data=PDF)
    with pytest.raises(ConfigError, match="must be http"):
        ImagePart("image/png", url="file:///etc/passwd")


def test_magic_bytes_tell_the_media_type() -> None:
    assert sniff_media_type(PNG) == "image/png"
    assert sniff_media_type(PDF) == "application/pdf"
    assert sniff_media_type(WAV) == "audio/wav"
    assert sniff_media_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff_media_type(b"plain text") is None


def test_image_reads_a_file_and_sniffs_its_media_type(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "shot.bin"
    path.write_bytes(PNG)
    part = image(path)
    assert part == ImagePart("image/png", data=PNG, name="shot.bin")
    assert image(PNG) == ImagePart("image/png", data=PNG)
    assert image("https://example.com/a.jpg").media_type == "image/jpeg"


def test_content_text_joins_the_text_parts() -> None:
    message = UserMessage((TextPart("one"), ImagePart("image/png", data=PNG), TextPart("two")))
    assert message.text == "one\ntwo"
    assert content_text("plain") == "plain"


def test_a_tool_result_with_parts_puts_its_text_first() -> None:
    picture = ImagePart("image/png", data=PNG)
    result = ToolResult("the chart", parts=(picture,))
    assert result.message_content("the chart") == (TextPart("the chart"), picture)
    assert ToolResult("plain").message_content("plain") == "plain"


def test_a_token_estimate_counts_each_part_by_its_kind_not_the_number_of_parts() -> None:
    from agent_smith.base.parts import IMAGE_TOKENS
    from agent_smith.memory import estimate_tokens

    text = "describe this picture in detail " * 10
    plain = estimate_tokens(UserMessage(text))
    with_image = estimate_tokens(UserMessage((text, ImagePart("image/png", data=PNG))))
    notes = DocumentPart("text/plain", data=b"x" * 4000)

    assert with_image == plain + IMAGE_TOKENS
    assert estimate_tokens(UserMessage((text, notes))) == plain + 1000


def test_a_summary_transcript_names_the_parts_instead_of_printing_their_bytes() -> None:
    from agent_smith.memory import transcript

    picture = ImagePart("image/png", data=PNG)
    lines = transcript(
        [UserMessage(("What is it?", picture)), ToolMessage("c", "shot", ("done", picture))]
    ).splitlines()

    assert lines == [
        "user: What is it? [image (image/png, 32 bytes)]",
        "tool shot result: done [image (image/png, 32 bytes)]",
    ]
