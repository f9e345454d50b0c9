"""The official ``a2a-sdk`` client against an A2A agent: the peer that calls our server.

``python -m tests.a2a.sdk_client URL BINDING [TOKEN]`` resolves the card at
URL, then over BINDING (``JSONRPC`` or ``HTTP+JSON``) sends a message,
streams one, gets a task, answers an input-required task, cancels a running
task and asks for an unknown one; it prints one JSON object saying what it
saw. The agent is the one of ``tests/a2a/conftest.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)


def _message(text: str, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    message = new_text_message(text, role=Role.ROLE_USER)
    if task_id:
        message.task_id = task_id
    if context_id:
        message.context_id = context_id
    return SendMessageRequest(message=message)


def _kind(event: StreamResponse) -> str:
    return str(event.WhichOneof("payload"))


async def main(url: str, binding: str, token: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers={"A2A-Version": "1.0", **headers}, timeout=30) as http:
        config = ClientConfig(
            streaming=False, httpx_client=http, supported_protocol_bindings=[binding]
        )
        client = await create_client(url, client_config=config)
        streaming = await create_client(
            url,
            client_config=ClientConfig(
                streaming=True, httpx_client=http, supported_protocol_bindings=[binding]
            ),
        )
        card = await client.get_extended_agent_card(
            __import__("a2a.types.a2a_pb2", fromlist=["x"]).GetExtendedAgentCardRequest()
        )
        seen["card"] = {"name": card.name, "skills": [s.name for s in card.skills]}

        events = [e async for e in client.send_message(_message("hello"))]
        task = events[-1].task
        seen["send"] = {"state": TaskState.Name(task.status.state), "text": _artifact_text(task)}

        kinds: list[str] = []
        text: list[str] = []
        last = None
        async for event in streaming.send_message(_message("stream me")):
            kinds.append(_kind(event))
            if event.HasField("artifact_update"):
                text.extend(p.text for p in event.artifact_update.artifact.parts)
            if event.HasField("status_update"):
                last = TaskState.Name(event.status_update.status.state)
        seen["stream"] = {"kinds": kinds, "text": "".join(text), "last": last}

        fetched = await client.get_task(GetTaskRequest(id=task.id, history_length=1))
        seen["get"] = {
            "state": TaskState.Name(fetched.status.state),
            "history": len(fetched.history),
            "context": fetched.context_id == task.context_id,
        }

        events = [e async for e in client.send_message(_message("save milk"))]
        waiting = events[-1].task
        answer = _message("yes", waiting.id, waiting.context_id)
        events = [e async for e in client.send_message(answer)]
        seen["input_required"] = {
            "asked": TaskState.Name(waiting.status.state),
            "data": bool([p for p in waiting.status.message.parts if p.HasField("data")]),
            "then": TaskState.Name(events[-1].task.status.state),
            "text": _artifact_text(events[-1].task),
        }

        stream = streaming.send_message(_message("wait"))
        first = await anext(stream)
        running = first.task.id
        cancelled = await client.cancel_task(CancelTaskRequest(id=running))
        rest = [e async for e in stream]
        seen["cancel"] = {
            "state": TaskState.Name(cancelled.status.state),
            "stream_last": TaskState.Name(rest[-1].status_update.status.state) if rest else None,
        }

        try:
            await client.get_task(GetTaskRequest(id="no-such-task"))
            seen["unknown"] = "found"
        except Exception as err:  # the SDK's error type differs by binding
            seen["unknown"] = type(err).__name__
        await client.close()
        await streaming.close()
    return seen


def _artifact_text(task: Any) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


if __name__ == "__main__":
    token = sys.argv[3] if len(sys.argv) > 3 else ""
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], token))))
