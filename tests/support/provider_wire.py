"""Provider wire bytes for the wire-fake tests, built from the providers' documented shapes.

The event order and field names follow Anthropic's streaming documentation
and the recordings other projects publish (message_start, then per block
content_block_start / _delta / _stop, ``ping`` between deltas, then
message_delta and message_stop; a parameterless tool's input arrives as one
empty ``partial_json``), and OpenAI's Responses streaming reference
(response.created, output_item.added, the deltas, output_item.done,
response.completed carrying the whole response).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agent_smith import Finished, LlmResponse, ToolSchema

JsonObject = dict[str, Any]

#: The one tool the provider tests offer.
WEATHER = ToolSchema(
    "get_weather", "The weather.", {"type": "object", "properties": {"city": {"type": "string"}}}
)


def reply_of(events: Iterable[object]) -> LlmResponse:
    """The response the stream's Finished event carries."""
    (finished,) = [e for e in events if isinstance(e, Finished)]
    return finished.response


def sse(name: str, data: JsonObject, *, crlf: bool = False) -> str:
    """One SSE event with an ``event:`` line."""
    end = "\r\n" if crlf else "\n"
    return f"event: {name}{end}data: {json.dumps(data)}{end}{end}"


def anthropic_events(
    blocks: list[JsonObject],
    *,
    stop_reason: str = "end_turn",
    usage: JsonObject | None = None,
    pings: bool = True,
) -> list[str]:
    """The SSE events of a reply made of ``blocks`` (text split in words, JSON in pieces)."""
    start_usage = {"input_tokens": 25, "output_tokens": 1, **(usage or {})}
    events = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_01Wire",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-wire",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        kind = block["type"]
        opened = dict(block)
        deltas: list[JsonObject] = []
        if kind == "text":
            opened["text"] = ""
            words = block["text"].split(" ")
            deltas = [
                {"type": "text_delta", "text": w if i == 0 else " " + w}
                for i, w in enumerate(words)
            ]
        elif kind == "thinking":
            opened.update(thinking="", signature="")
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]}]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind in ("tool_use", "server_tool_use"):
            opened["input"] = {}
            text = json.dumps(block["input"]) if block["input"] else ""
            pieces = [text[i : i + 5] for i in range(0, len(text), 5)] or [""]
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        events.append(
            sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            )
        )
        if pings and index == 0:
            events.append(sse("ping", {"type": "ping"}))
        for delta in deltas:
            events.append(
                sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 42},
            },
        )
    )
    events.append(sse("message_stop", {"type": "message_stop"}))
    return events


def responses_events(output: list[JsonObject], *, status: str = "completed") -> list[str]:
    """The SSE events of a Responses reply whose final ``output`` is ``output``."""
    response = {"id": "resp_wire", "object": "response", "model": "gpt-wire", "status": status}
    events = [
        sse("response.created", {"type": "response.created", "response": response}),
        sse("response.in_progress", {"type": "response.in_progress", "response": response}),
    ]
    for index, item in enumerate(output):
        added = dict(item)
        if item["type"] == "function_call":
            added["arguments"] = ""
        if item["type"] == "message":
            added["content"] = []
        events.append(
            sse(
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": index, "item": added},
            )
        )
        if item["type"] == "reasoning":
            for part in item.get("summary", []):
                events.append(
                    sse(
                        "response.reasoning_summary_text.delta",
                        {
                            "type": "response.reasoning_summary_text.delta",
                            "item_id": item["id"],
                            "delta": part["text"],
                        },
                    )
                )
        elif item["type"] == "function_call":
            events.append(
                sse(
                    "response.function_call_arguments.delta",
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": item["id"],
                        "delta": item["arguments"],
                    },
                )
            )
        elif item["type"] == "message":
            for part in item["content"]:
                for i, word in enumerate(part["text"].split(" ")):
                    events.append(
                        sse(
                            "response.output_text.delta",
                            {
                                "type": "response.output_text.delta",
                                "item_id": item["id"],
                                "delta": word if i == 0 else " " + word,
                            },
                        )
                    )
        events.append(
            sse(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        )
    final = {
        **response,
        "status": status,
        "output": output,
        "usage": {
            "input_tokens": 30,
            "output_tokens": 12,
            "total_tokens": 42,
            "input_tokens_details": {"cached_tokens": 8},
            "output_tokens_details": {"reasoning_tokens": 5},
        },
    }
    if status == "incomplete":
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    name = "response.completed" if status == "completed" else f"response.{status}"
    events.append(sse(name, {"type": name, "response": final}))
    return events


# -- one script, every dialect ---------------------------------------------------


def speak(server: Any, provider: str, *replies: Any) -> None:
    """Script ``server`` (a ScriptedLlmServer) to answer ``replies`` in ``provider``'s dialect.

    ``replies`` are the scripted server's ``Text``/``Calls`` (and ``Hold``) values;
    each is rendered when its request arrives, streamed or not as asked.
    """
    if provider == "openai":
        server.script(*replies)
        return
    from collections import deque

    from tests.support.llm_server import Hold

    queue = deque(replies)

    def respond(body: JsonObject) -> Any:
        reply = queue.popleft()
        path = server.paths[-1]  # recorded as the request arrived
        if isinstance(reply, Hold):
            return Hold(reply.gate, render(provider, reply.then, body, path), reply.reached)
        return render(provider, reply, body, path)

    server.responder = respond


def render(provider: str, reply: Any, body: JsonObject, path: str = "") -> Any:
    """A Text or Calls reply as ``provider`` would send it (Chunks or Raw) to ``path``."""
    from tests.support.llm_server import Calls, Chunks, Raw

    stream = bool(body.get("stream"))
    calls = reply.calls if isinstance(reply, Calls) else ()
    if provider == "gemini":
        chunks = gemini_chunks(reply.content if not calls else "", calls)
        if ":streamGenerateContent" not in path:
            whole = gemini_chunks(reply.content if not calls else "", calls, pieces=False)
            return Raw(200, json.dumps(whole[0]))
        return Chunks(*(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks))
    if provider == "bedrock":
        from tests.support.aws_eventstream import converse_stream

        if path.endswith("/converse-stream"):
            return Chunks(*converse_stream(reply.content if not calls else "", calls))
        content: list[JsonObject] = (
            [
                {"toolUse": {"toolUseId": f"tooluse_{i}", "name": name, "input": args}}
                for i, (name, args) in enumerate(calls)
            ]
            if calls
            else [{"text": reply.content}]
        )
        converse = {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if calls else "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        }
        return Raw(200, json.dumps(converse))
    if provider == "ollama":
        lines = ollama_lines(reply.content if not calls else "", calls, stream=stream)
        return Chunks(*lines) if stream else Raw(200, lines[0])
    if provider == "anthropic":
        blocks: list[JsonObject] = (
            [
                {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
                for i, (name, args) in enumerate(calls)
            ]
            if calls
            else [{"type": "text", "text": reply.content}]
        )
        stop = "tool_use" if calls else "end_turn"
        if stream:
            return Chunks(*anthropic_events(blocks, stop_reason=stop))
        message = {
            "id": "msg_wire",
            "type": "message",
            "role": "assistant",
            "model": "claude-wire",
            "content": blocks,
            "stop_reason": stop,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return Raw(200, json.dumps(message))
    output: list[JsonObject] = (
        [
            {
                "type": "function_call",
                "id": f"fc_{i}",
                "call_id": f"call_{i}",
                "name": name,
                "arguments": json.dumps(args),
            }
            for i, (name, args) in enumerate(calls)
        ]
        if calls
        else [
            {
                "type": "message",
                "id": "msg_wire",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.content}],
            }
        ]
    )
    if stream:
        return Chunks(*responses_events(output))
    response = {"id": "resp_wire", "status": "completed", "model": "gpt-wire", "output": output}
    return Raw(200, json.dumps(response))


def tool_outputs(provider: str, body: JsonObject) -> list[str]:
    """The tool results a request body sends, whatever its dialect."""
    if provider == "gemini":
        return [
            part["functionResponse"]["response"]["result"]
            for content in body["contents"]
            for part in content["parts"]
            if "functionResponse" in part
        ]
    if provider == "bedrock":
        return [
            block["toolResult"]["content"][0]["text"]
            for turn in body["messages"]
            for block in turn["content"]
            if "toolResult" in block
        ]
    if provider in ("openai", "ollama"):
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if provider == "anthropic":
        return [
            block["content"]
            for turn in body["messages"]
            if isinstance(turn["content"], list)
            for block in turn["content"]
            if block["type"] == "tool_result"
        ]
    return [item["output"] for item in body["input"] if item.get("type") == "function_call_output"]


def gemini_chunks(
    text: str, calls: Any = (), *, pieces: bool = True, signature: str = "CiQBcsjafQ=="
) -> list[JsonObject]:
    """``GenerateContentResponse`` chunks: text word by word (or whole), or function calls
    (the first carrying a thought signature, as Gemini 3 sends them), the last finishing."""

    def chunk(parts: list[JsonObject], finish: bool) -> JsonObject:
        candidate: JsonObject = {"content": {"role": "model", "parts": parts}, "index": 0}
        out: JsonObject = {"candidates": [candidate], "modelVersion": "gemini-wire"}
        if finish:
            candidate["finishReason"] = "STOP"
            out["responseId"] = "gem-resp-1"
            out["usageMetadata"] = {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "thoughtsTokenCount": 3,
                "cachedContentTokenCount": 4,
                "totalTokenCount": 18,
            }
        return out

    if calls:
        parts: list[JsonObject] = [
            {"functionCall": {"name": name, "args": args}} for name, args in calls
        ]
        parts[0]["thoughtSignature"] = signature
        return [chunk(parts, True)]
    words = text.split(" ") if pieces else [text]
    out = [chunk([{"text": w if i == 0 else " " + w}], False) for i, w in enumerate(words)]
    out[-1] = chunk(out[-1]["candidates"][0]["content"]["parts"], True)
    return out


def ollama_lines(text: str, calls: Any = (), *, stream: bool = True) -> list[str]:
    """``/api/chat`` NDJSON lines (or, not streaming, the one whole object)."""
    head = {"model": "llama-wire", "created_at": "2026-01-01T00:00:00Z"}
    tool_calls = [{"function": {"name": name, "arguments": args}} for name, args in calls]
    end = {
        **head,
        "done": True,
        "done_reason": "stop",  # "stop" even after tool calls
        "prompt_eval_count": 10,
        "eval_count": 5,
    }
    if not stream:
        message: JsonObject = {"role": "assistant", "content": text}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return [json.dumps({**end, "message": message})]
    lines = []
    if tool_calls:
        message = {"role": "assistant", "content": "", "tool_calls": tool_calls}
        lines.append({**head, "message": message, "done": False})
    else:
        for i, word in enumerate(text.split(" ")):
            piece = word if i == 0 else " " + word
            lines.append(
                {**head, "message": {"role": "assistant", "content": piece}, "done": False}
            )
    lines.append({**end, "message": {"role": "assistant", "content": ""}})
    return [json.dumps(line) + "\n" for line in lines]
