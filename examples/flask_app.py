"""A Flask page whose agent reply streams into the browser, with Approve/Deny for risky tools.

Run it with a server on :8080 (or any OpenAI-compatible server with tool
calling at $LLAMA_SERVER_URL):

    agent-smith serve --local                  # in one terminal: the local model
    flask --app examples/flask_app.py run      # in another; then open http://127.0.0.1:5000

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

``save_note`` needs the user's approval. When the model calls it, the stream
defers the question, the turn pauses (``ApprovalRequired``) and the agent
keeps its ``PausedTurn`` in the session next to the history; the page
shows Approve / Deny buttons. The click is a *later* request — possibly to
another worker process — which builds a fresh agent on the session and
streams the rest of the turn from ``agent.resume_stream(state, {call_id:
True | reason})``.
"""

from __future__ import annotations

import html
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import closing, suppress

from flask import Flask, Response, jsonify, request

from agent_smith import (
    Agent,
    AgentBusyError,
    AgentEvent,
    AgentSmithError,
    ApprovalRequested,
    ApprovalRequired,
    FinalAnswer,
    LlmClient,
    PausedTurn,
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
NOTES: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city (a stand-in for a real weather API)."""
    return f"Sunny and 21 °C in {city}."


@tool(requires_approval=True)
def save_note(text: str) -> str:
    """Save a note for the user (each note needs the user's approval)."""
    NOTES.append(text)
    return f"Saved note: {text}"


PAGE = """<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>agent_smith + Flask</title>
<style>
  body { font: 16px system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; }
  #reply { white-space: pre-wrap; border-left: 3px solid #ccc; padding-left: 1rem; }
  .ask { background: #fff6d6; padding: .5rem; margin: .5rem 0; }
</style>
<h1>Ask the agent</h1>
<div id="history"><!--history--></div>
<form id="ask">
  <input name="q" size="50" value="What's the weather like in Paris?" autofocus>
  <button>Ask</button>
</form>
<p id="reply"></p>
<div id="approvals"></div>
<script>
const reply = document.getElementById("reply");
const approvals = document.getElementById("approvals");

async function show(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    reply.textContent += decoder.decode(value, {stream: true});
  }
  const pending = await (await fetch("/pending")).json();
  approvals.replaceChildren(...pending.map(ask));
}

function ask(item) {
  const box = document.createElement("div");
  box.className = "ask";
  box.textContent = `${item.tool} ${JSON.stringify(item.arguments)} `;
  for (const [label, approve] of [["Approve", "yes"], ["Deny", "no"]]) {
    const button = document.createElement("button");
    button.textContent = label;
    button.onclick = async () => {
      approvals.replaceChildren();
      const form = new FormData();
      form.append("call_id", item.call_id);
      form.append("approve", approve);
      await show(await fetch("/decide", {method: "POST", body: form}));
    };
    box.append(button);
  }
  return box;
}

document.getElementById("ask").addEventListener("submit", async (event) => {
  event.preventDefault();
  reply.textContent = "";
  await show(await fetch("/chat", {method: "POST", body: new FormData(event.target)}));
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
    response = _streamed(conversation, lambda agent: agent.stream(question))
    response.set_cookie(COOKIE, conversation, max_age=30 * 86400, httponly=True, samesite="Lax")
    return response


@app.get("/pending")
def pending() -> Response:
    """The calls of this conversation's paused turn that wait for the user."""
    waiting = _paused(request.cookies.get(COOKIE, ""))
    requests = waiting.requests if waiting is not None else ()
    return jsonify(
        [{"call_id": r.call_id, "tool": r.tool_name, "arguments": r.arguments} for r in requests]
    )


@app.post("/decide")
def decide() -> Response:
    """Approve or deny one waiting call and stream the rest of the paused turn."""
    conversation = request.cookies.get(COOKIE, "")
    state = _paused(conversation)
    if state is None:
        return Response("Nothing waits for a decision.\n", status=409, mimetype="text/plain")
    call_id = request.form.get("call_id", "")
    if call_id not in state.waiting:
        return Response("No such call waits.\n", status=400, mimetype="text/plain")
    answer = True if request.form.get("approve") == "yes" else "the user clicked Deny"
    return _streamed(conversation, lambda agent: agent.resume_stream(state, {call_id: answer}))


def _paused(conversation: str) -> PausedTurn | None:
    if not conversation:
        return None
    with (
        SqliteSession(SESSIONS, conversation) as session,
        _agent(session) as agent,
    ):
        return agent.paused_turn


def _agent(session: SqliteSession) -> Agent:
    """A fresh agent on the conversation's session (an agent runs one turn at a time)."""
    return Agent(llm, SYSTEM_PROMPT, tools=[get_weather, save_note], session=session)


def _streamed(conversation: str, start: Callable[[Agent], Iterator[AgentEvent]]) -> Response:
    """Run a turn (or the rest of a paused one) on a fresh agent over the session, streamed."""

    def reply() -> Iterator[str]:
        try:
            with (
                SqliteSession(SESSIONS, conversation) as session,
                _agent(session) as agent,
                suppress(ApprovalRequired),  # the agent stored the paused turn; /pending lists it
                closing(start(agent)) as events,
            ):
                streamed = False  # text of this round reached the page
                for event in events:
                    if isinstance(event, TokenDelta):
                        streamed = streamed or bool(event.text)
                        yield event.text
                    elif isinstance(event, ToolCallRequested):
                        streamed = False
                        yield f"[calling {event.call.name}]\n"
                    elif isinstance(event, FinalAnswer) and not streamed:
                        yield event.message.content  # an answer that came whole (a tool's result)
                    elif isinstance(event, ApprovalRequested):
                        event.defer()  # ask the user in a later request
                        yield f"[{event.request.tool_name} needs your approval]\n"
        except AgentBusyError:  # this browser's other tab is mid-reply
            yield "\n[busy: this conversation is still answering elsewhere; try again soon]\n"
        except AgentSmithError as err:  # headers are already sent: report in the body
            yield f"\n[error: {err}]\n"

    return Response(
        reply(),
        mimetype="text/plain",
        # Proxies (nginx) would otherwise buffer the whole reply.
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


if __name__ == "__main__":
    app.run(threaded=True)
