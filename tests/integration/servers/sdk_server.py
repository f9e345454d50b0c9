"""An MCP server written with the official Python SDK, for interop tests.

Run over stdio (default), Streamable HTTP or the 2024-11-05 HTTP+SSE transport::

    python sdk_server.py                                  # stdio
    python sdk_server.py --http --port 8123               # HTTP, SSE responses
    python sdk_server.py --http --port 8123 --json        # HTTP, JSON responses
    python sdk_server.py --sse --port 8123                # HTTP+SSE at /sse

Tools: ``echo``, ``add`` (structured output), ``fail`` (isError), ``image``
(non-text content), ``media`` (audio and an embedded PDF resource), ``slow``
(sleeps; records a cancellation),
``cancellations`` (waits for and returns the recorded cancellations),
``chatty`` (log + progress notifications, then a tools/list_changed),
``stderr_spam`` (writes N bytes to stderr before answering), ``ping_client``
(sends the client a ping request), ``ask`` (elicitation), ``roots`` (asks
for the client's roots), ``add_tool`` (registers ``extra`` and announces it),
``exit_now`` (the process dies mid-call), ``ask_both`` (elicitation and
roots through resolvers: one ``input_required`` round at 2026-07-28).
Resource ``test://greeting``, prompt ``greet``.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import sys
import warnings
import wave
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ListRootsResult,
    TextContent,
)
from pydantic import BaseModel

# ctx.info() is deprecated in the 2026 revision; we still test logging.
warnings.simplefilter("ignore")

server = MCPServer("agent-smith-test-server", version="1.0.0")

# Cancellations seen by ``slow``: request ids in arrival order.
_cancelled: list[str] = []
_cancel_seen = anyio.Event()


@server.tool(description="Return the text unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Always fails.")
def fail(message: str = "boom") -> str:
    raise ValueError(message)


@server.tool(description="Return a tiny PNG image and a caption.", structured_output=False)
def image() -> list[Any]:
    return [
        TextContent(type="text", text="a red dot"),
        ImageContent(type="image", data="iVBORw0KGgo=", mimeType="image/png"),
    ]


@server.tool(description="Return a WAV of silence and a PDF, as audio and a resource.")
def media() -> list[Any]:
    sound = io.BytesIO()
    with wave.open(sound, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 80)
    pdf = b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
    return [
        TextContent(type="text", text="a sound and a paper"),
        AudioContent(type="audio", data=_b64(sound.getvalue()), mimeType="audio/wav"),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///papers/paper.pdf", mimeType="application/pdf", blob=_b64(pdf)
            ),
        ),
    ]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@server.tool(description="Sleep for the given seconds; records being cancelled.")
async def slow(seconds: float, ctx: Context) -> str:
    # Progress 0 (sent only when the call carries a progress token) tells a
    # test that the call is running, so it can cancel it without guessing.
    await ctx.report_progress(0, seconds, "sleeping")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _cancelled.append(str(ctx.request_id))
        _cancel_seen.set()
        raise
    return f"slept {seconds}"


@server.tool(description="Wait up to `wait` seconds for a cancellation; list those seen.")
async def cancellations(wait: float = 5.0) -> list[str]:
    with anyio.move_on_after(wait):
        await _cancel_seen.wait()
    return list(_cancelled)


@server.tool(description="Send log and progress notifications, then tools/list_changed.")
async def chatty(ctx: Context) -> str:
    await ctx.info("chatty says hello")
    await ctx.report_progress(1, 2, "halfway")
    await ctx.report_progress(2, 2, "done")
    await ctx.session.send_tool_list_changed()
    return "chatted"


@server.tool(description="Write `size` bytes to stderr, then answer.")
def stderr_spam(size: int) -> str:
    line = "x" * 1023 + "\n"
    for _ in range(size // 1024):
        sys.stderr.write(line)
    sys.stderr.flush()
    return f"wrote {size}"


@server.tool(description="Ping the client and report that it answered.")
async def ping_client(ctx: Context) -> str:
    await ctx.session.send_ping()
    return "client answered ping"


class _Answer(BaseModel):
    answer: str


@server.tool(description="Ask the user a question through elicitation.")
async def ask(question: str, ctx: Context) -> str:
    result = await ctx.elicit(question, _Answer)
    if result.action == "accept" and result.data is not None:
        return f"accept: {result.data.answer}"
    return result.action


@server.tool(description="Ask the client for its roots.")
async def roots(ctx: Context) -> str:
    try:
        result = await ctx.session.list_roots()
    except Exception as err:  # the client may refuse: report how
        return f"error: {err}"
    return ",".join(str(root.uri) for root in result.roots)


def _who(question: str) -> Elicit[_Answer]:
    return Elicit(question, _Answer)


def _where() -> ListRoots:
    return ListRoots()


@server.tool(description="Ask a name and the roots, in either generation (resolvers).")
async def ask_both(
    question: str,
    who: Annotated[_Answer, Resolve(_who)],
    where: Annotated[ListRootsResult, Resolve(_where)],
) -> str:
    # 2026-07-28: both questions ride one InputRequiredResult; before: two server requests.
    return f"{who.answer} in " + ",".join(str(root.uri) for root in where.roots)


@server.tool(description="Register the tool `extra` and announce the change.")
async def add_tool(ctx: Context) -> str:
    def extra() -> str:
        return "extra!"

    server.add_tool(extra, name="extra", description="Added at run time.")
    await ctx.session.send_tool_list_changed()
    return "added"


@server.tool(description="Exit the process without answering.")
def exit_now() -> str:
    sys.stdout.flush()
    os._exit(3)


@server.resource("test://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello from the resource"


@server.prompt(description="Greet someone by name.")
def greet(name: str) -> str:
    return f"Please greet {name} warmly."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP")
    parser.add_argument("--sse", action="store_true", help="serve HTTP+SSE (2024-11-05) at /sse")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp")
    parser.add_argument("--json", action="store_true", help="JSON (not SSE) responses")
    parser.add_argument("--stateless", action="store_true", help="no session ids")
    args = parser.parse_args()
    if args.sse:
        server.run("sse", host=args.host, port=args.port)
    elif args.http:
        server.run(
            "streamable-http",
            host=args.host,
            port=args.port,
            streamable_http_path=args.path,
            json_response=args.json,
            stateless_http=args.stateless,
        )
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
