"""Amazon Bedrock's Converse API (``Converse``, ``ConverseStream``), the ``[bedrock]`` extra.

:class:`BedrockClient` is a :class:`~agent_smith.llm.model.ChatModel` that
posts JSON over the shared HTTP path and signs each attempt with botocore's
SigV4 (credentials from the standard AWS chain: environment, profile, SSO,
instance role; resolved once, at construction). botocore is imported only
here: ``pip install -e '.[bedrock]'``; no AWS SDK client is used.

Conversion at this edge: system messages become ``system`` blocks; user
messages and tool results (``toolResult`` blocks) ``user`` turns; an
assistant turn its replayed reasoning blocks (when Bedrock wrote it), a
``text`` block and ``toolUse`` blocks. ``cache=True`` adds ``cachePoint``
blocks after the system prompt, the tools and the latest turn. The Converse
API has no native structured output: typed output uses a tool, and a
``json_schema`` response format is refused. HTTP errors are named by their
``x-amzn-ErrorType``. Replies are read in :mod:`.bedrock_reply`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import quote

from .._internal.extras import install_hint
from ..base.parts import Content, ImagePart, TextPart, normal_media_type
from ..errors import ConfigError
from ..messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from ..runtime import Runtime
from .bedrock_reply import PROVIDER, WHO, BedrockStreamDecoder, parse_converse
from .convert import add_turn, forced_tool, output_schema, sampling_fields, sampling_of, system_text
from .events import StreamEvent
from .http_model import HttpChatModel
from .part_support import COMMON_IMAGES, PartSupport
from .request import LlmRequest, LlmResponse, SamplingParams
from .retry import RetryPolicy
from .wire_bytes import Base64Data

log = logging.getLogger(__name__)

INSTALL_HINT = install_hint("bedrock")
_RESERVED = ("messages", "system", "toolConfig", "inferenceConfig")
_CACHE_POINT = {"cachePoint": {"type": "default"}}

JsonObject = dict[str, Any]


_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}

#: Images (3.75 MB) and documents (4.5 MB) as bytes, in tool results too; no URLs, no audio.
PARTS = PartSupport(
    media_types=COMMON_IMAGES | frozenset(_DOCUMENT_FORMATS),
    in_tool_results=frozenset({"image", "document"}),
    max_bytes=(("image", 3_932_160), ("document", 4_718_592)),
)


class BedrockClient(HttpChatModel):
    """A client for Bedrock's Converse API (see the module doc).

    ``endpoint`` None: ``https://bedrock-runtime.<region>.amazonaws.com``;
    ``region`` None: ``$AWS_REGION``, else the AWS chain's (``AWS_DEFAULT_REGION``,
    the profile), else ``us-east-1``. ``model``
    is the model or inference-profile id. ``additional_fields`` go in
    ``additionalModelRequestFields`` (e.g. Claude's thinking budget).
    ``api_key`` is a Bedrock API key (bearer) used instead of SigV4.
    ``server_tools`` are Bedrock's system tools to offer, sent as given after
    the request's tools (``{"systemTool": {"name": "nova_grounding"}}``);
    what they did comes back as :class:`~agent_smith.llm.events.ServerToolUsed`.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        model: str = "",
        *,
        api_key: str | None = None,
        request_timeout: float = 60.0,
        max_retries: int = 3,
        default_sampling: SamplingParams = SamplingParams(),  # noqa: B008 (frozen value)
        runtime: Runtime | None = None,
        retry_policy: RetryPolicy | None = None,
        region: str | None = None,
        profile: str | None = None,
        cache: bool = False,
        additional_fields: JsonObject | None = None,
        context_size: int | None = None,
        server_tools: Sequence[JsonObject] = (),
    ) -> None:
        try:
            import botocore.session
        except ImportError as err:
            raise ConfigError(f"BedrockClient needs botocore: {INSTALL_HINT}") from err
        if not model:
            raise ConfigError("BedrockClient needs a model id (it is part of the URL)")
        session = botocore.session.Session(profile=profile)
        self._region = (
            region
            or os.environ.get("AWS_REGION")
            or session.get_config_variable("region")
            or "us-east-1"
        )
        base = (endpoint or f"https://bedrock-runtime.{self._region}.amazonaws.com").rstrip("/")
        path = f"/model/{quote(model, safe='')}"
        api_key = api_key or None
        credentials = None if api_key else session.get_credentials()
        if credentials is None and not api_key:
            raise ConfigError(f"{WHO}: no AWS credentials found in the standard chain")
        super().__init__(
            f"{base}{path}/converse",
            model,
            who=WHO,
            provider=PROVIDER,
            api_key=api_key,
            headers={},  # each attempt is signed (see _sign)
            request_timeout=request_timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            default_sampling=default_sampling,
            runtime=runtime,
            native_output=False,
            context_size=context_size,
            server_tools=server_tools,
            parts=PARTS,
        )
        self._stream_url = f"{base}{path}/converse-stream"
        self._cache = cache
        self._extra_fields = dict(additional_fields or {})
        self._credentials = credentials
        self._signer = self._sign

    _accept = "application/vnd.amazon.eventstream"

    def _request_body(self, request: LlmRequest, *, stream: bool) -> JsonObject:
        return self.body(request)

    def _parse(self, parsed: Any) -> LlmResponse:
        return parse_converse(parsed)

    def _decode(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        return BedrockStreamDecoder(endpoint=self._shown).events(chunks)

    def body(self, request: LlmRequest) -> JsonObject:
        """The Converse request body for ``request`` (see the module doc)."""
        sampling = sampling_of(request, self._defaults, reserved=_RESERVED)
        if output_schema(sampling.response_format) is not None:
            raise ConfigError(
                f"{WHO} has no native structured output; use output_mode='tool' (the default"
                " when the model says so)"
            )
        body: JsonObject = {"messages": _turns(request.messages, cache=self._cache)}
        system = system_text(request.messages)
        if system:
            body["system"] = [{"text": system}] + ([_CACHE_POINT] if self._cache else [])
        tools: list[JsonObject] = [
            {
                "toolSpec": {
                    "name": t.name,
                    "description": t.description or t.name,
                    "inputSchema": {"json": t.parameters},
                }
            }
            for t in request.tools
        ] + self._offered_server_tools()
        if tools:
            if self._cache:
                tools.append(_CACHE_POINT)
            body["toolConfig"] = {"tools": tools}
            if request.tools:
                body["toolConfig"]["toolChoice"] = _tool_choice(request.tool_choice)
        config = sampling_fields(
            sampling,
            temperature="temperature",
            top_p="topP",
            max_tokens="maxTokens",
            stop="stopSequences",
        )
        if config:
            body["inferenceConfig"] = config
        if self._extra_fields:
            body["additionalModelRequestFields"] = dict(self._extra_fields)
        body.update(sampling.extra)
        return body

    def _sign(self, url: str, data: bytes, headers: dict[str, str]) -> None:
        """SigV4 headers for this attempt (or the API key as a bearer token)."""
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
            return
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        for stale in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            headers.pop(stale, None)
        signed = AWSRequest(method="POST", url=url, data=data, headers=dict(headers))
        frozen = self._credentials.get_frozen_credentials()  # type: ignore[union-attr]
        SigV4Auth(frozen, "bedrock", self._region).add_auth(signed)
        headers.update({k: str(v) for k, v in signed.headers.items()})


def _tool_choice(choice: str | JsonObject | None) -> JsonObject:
    name = forced_tool(choice)
    if name is not None:
        return {"tool": {"name": name}}
    if choice in (None, "auto", "none"):  # Converse has no "none": offering tools is the choice
        return {"auto": {}}
    if choice == "required":
        return {"any": {}}
    raise ConfigError(f"{WHO} has no tool_choice {choice!r}")


def _blocks(content: Content) -> list[JsonObject]:
    """Content as Converse blocks: ``text``, ``image`` and ``document`` (base64 ``bytes``)."""
    if isinstance(content, str):
        return [{"text": content}]
    blocks: list[JsonObject] = []
    documents = 0
    for part in content:
        if isinstance(part, TextPart):
            blocks.append({"text": part.text})
            continue
        media_type = normal_media_type(part.media_type)
        source = {"bytes": Base64Data(part.data or b"")}
        if isinstance(part, ImagePart):
            blocks.append({"image": {"format": media_type.split("/", 1)[1], "source": source}})
        else:
            documents += 1
            name = _document_name(part.name or f"Document {documents}")
            document = {"format": _DOCUMENT_FORMATS[media_type], "name": name, "source": source}
            blocks.append({"document": document})
    return blocks


def _document_name(name: str) -> str:
    """A document name as Converse takes it: letters, digits, single spaces, - ( ) [ ]."""
    kept = re.sub(r"[^A-Za-z0-9\-()\[\] ]", " ", name.rsplit(".", 1)[0])
    return " ".join(kept.split()) or "document"


def _turns(messages: Sequence[Message], *, cache: bool) -> list[JsonObject]:
    turns: list[JsonObject] = []

    for message in messages:
        if isinstance(message, UserMessage):
            add_turn(turns, "user", _blocks(message.content), key="content")
        elif isinstance(message, ToolMessage):
            result: JsonObject = {
                "toolUseId": message.tool_call_id,
                "content": _blocks(message.content),
            }
            add_turn(turns, "user", [{"toolResult": result}], key="content")
        elif isinstance(message, AssistantMessage):
            blocks: list[JsonObject] = []
            replay = message.replay_for(PROVIDER)
            if isinstance(replay, dict) and isinstance(replay.get("content"), list):
                blocks.extend(dict(b) for b in replay["content"] if isinstance(b, dict))
            if message.content:
                blocks.append({"text": message.content})
            for call in message.tool_calls:
                use = {"toolUseId": call.id, "name": call.name, "input": call.arguments}
                blocks.append({"toolUse": use})
            if blocks:
                add_turn(turns, "assistant", blocks, key="content")
        elif not isinstance(message, SystemMessage):
            raise ConfigError(f"{WHO} cannot send a {type(message).__name__}")
    if cache and turns:
        turns[-1]["content"].append(dict(_CACHE_POINT))
    return turns
