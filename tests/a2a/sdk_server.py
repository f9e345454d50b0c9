"""An A2A agent built with the official ``a2a-sdk`` (Starlette, uvicorn): the peer our client calls.

``python -m tests.a2a.sdk_server PORT`` serves on 127.0.0.1:PORT until
killed: the card at ``/.well-known/agent-card.json``, JSON-RPC at ``/rpc``,
HTTP+JSON below ``/rest``. The agent:

* ``save <text>``: asks for input (``Save '<text>'? yes or no``); the next
  message on the task answers (``yes``: ``saved <text>``, else ``not saved``);
* ``wait``: works until cancelled;
* ``fail``: fails;
* anything else: ``echo: <text>``, streamed as artifact chunks word by word.
"""

from __future__ import annotations

import asyncio
import sys

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from starlette.applications import Starlette


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        waiting = task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        await updater.start_work()
        if waiting:
            asked = task.history[0].parts[0].text.removeprefix("save ")
            answer = "saved " + asked if text.strip().lower() == "yes" else "not saved"
            await updater.complete(new_text_message(answer, task.context_id, task.id))
        elif text.startswith("save "):
            question = f"Save {text.removeprefix('save ')!r}? yes or no"
            await updater.requires_input(new_text_message(question, task.context_id, task.id))
        elif text == "wait":
            while True:
                await asyncio.sleep(0.05)
        elif text == "fail":
            await updater.failed(new_text_message("it went wrong", task.context_id, task.id))
        else:
            words = f"echo: {text}".split(" ")
            for i, word in enumerate(words):
                last = i == len(words) - 1
                await updater.add_artifact(
                    [new_text_part(word if last else word + " ")],
                    artifact_id="answer",
                    append=i > 0,
                    last_chunk=last,
                )
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def app(port: int) -> Starlette:
    base = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="sdk echo",
        description="Echoes, asks before saving, waits when told.",
        supported_interfaces=[
            AgentInterface(url=base + "/rpc", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(
                url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Echoes the text", tags=["demo"])],
    )
    handler = DefaultRequestHandler(EchoExecutor(), InMemoryTaskStore(), card)
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/rpc"),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]
    return Starlette(routes=routes)


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(app(port), host="127.0.0.1", port=port, log_level="warning")
