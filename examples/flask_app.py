"""A Flask page whose agent reply streams into the browser as the model writes it.

Run it (llama-server, or any OpenAI-compatible server with tool calling, at
$LLAMA_SERVER_URL, default http://127.0.0.1:8080):

    flask --app examples/flask_app.py run      # then open http://127.0.0.1:5000

Each request gets its own Agent (an agent runs one turn at a time); all share
one LlmClient and the process's Runtime, so requests on Flask's threads run in
parallel. The reply is a streaming Response driven by ``agent.stream()``: each
token is sent as the model writes it. If the browser goes away, Flask closes
the generator, which cancels the agent's turn.

Each browser has one conversation, kept in a SQLite file
($AGENT_SMITH_SESSIONS, default conversations.db) under a random id in a
cookie, so it survives restarts and follows the browser from one worker
process to the next. Two replies at once in one conversation (two tabs) are
refused, not mixed.
"""

from __future__ import annotations

import html
import os
import secrets
from collections.abc import Iterator
from contextlib import closing

from flask import Flask, Response, request

from agent_smith import (
    Agent,
    AgentBusyError,
    AgentSmithError,
    LlmClient,
    SqliteSession,
    TokenDelta,
    ToolCallRequested,
    tool,
)

ENDPOINT = os.environ.get("LLAMA_SERVER_URL", "http://127.0.0.1:8080")
SYSTEM_PROMPT = "You are a helpful assistant. Use your tools when they help."
SESSIONS = os.environ.get("AGENT_SMITH_SESSIONS", "conversations.db")
COOKIE = "conversation"

llm = LlmClient(ENDPOINT)
app = Flask(__name__)


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city (a stand-in for a real weather API)."""
    return f"Sunny and 21 °C in {city}."


PAGE = """<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>agent_smith + Flask</title>
<style>
  body { font: 16px system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; }
  #reply { white-space: pre-wrap; border-left: 3px solid #ccc; padding-left: 1rem; }
</style>
<h1>Ask the agent</h1>
<div id="history"><!--history--></div>
<form id="ask">
  <input name="q" size="50" value="What's the weather like in Paris?" autofocus>
  <button>Ask</button>
</form>
<p id="reply"></p>
<script>
document.getElementById("ask").addEventListener("submit", async (event) => {
  event.preventDefault();
  const reply = document.getElementById("reply");
  reply.textContent = "";
  const response = await fetch("/chat", {method: "POST", body: new FormData(event.target)});
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    reply.textContent += decoder.decode(value, {stream: true});
  }
});
</script>
</html>
"""


@app.get("/")
def index() -> str:
    conversation = request.cookies.get(COOKIE)
    if not conversation:
        return PAGE
    with SqliteSession(SESSIONS, conversation) as session:
        said = [m for m in session.messages() if m.role in ("user", "assistant") and m.content]
    lines = "".join(f"<p><b>{m.role}:</b> {html.escape(m.content)}</p>" for m in said)
    return PAGE.replace("<!--history-->", lines)


@app.post("/chat")
def chat() -> Response:
    question = request.form.get("q", "").strip()
    if not question:
        return Response("Ask something.\n", status=400, mimetype="text/plain")

    conversation = request.cookies.get(COOKIE) or secrets.token_urlsafe(16)

    def reply() -> Iterator[str]:
        try:
            with (
                SqliteSession(SESSIONS, conversation) as session,
                Agent(llm, SYSTEM_PROMPT, tools=[get_weather], session=session) as agent,
                closing(agent.stream(question)) as events,
            ):
                for event in events:
                    if isinstance(event, TokenDelta):
                        yield event.text
                    elif isinstance(event, ToolCallRequested):
                        yield f"[calling {event.call.name}]\n"
        except AgentBusyError:  # this browser's other tab is mid-reply
            yield "\n[busy: this conversation is still answering elsewhere; try again soon]\n"
        except AgentSmithError as err:  # headers are already sent: report in the body
            yield f"\n[error: {err}]\n"

    response = Response(
        reply(),
        mimetype="text/plain",
        # Proxies (nginx) would otherwise buffer the whole reply.
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.set_cookie(COOKIE, conversation, max_age=30 * 86400, httponly=True, samesite="Lax")
    return response


if __name__ == "__main__":
    app.run(threaded=True)
