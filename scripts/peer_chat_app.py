"""The peer of scripts/bench_scaleout.py: pydantic-ai's Vercel AI adapter on Starlette.

What a pydantic-ai user writes for a ``useChat`` endpoint: an ``Agent`` on an
OpenAI-compatible model (the benchmark's scripted server, ``PEER_MODEL_URL``)
and ``VercelAIAdapter.dispatch_request`` behind ``POST /api/chat``. Served by
uvicorn (``uvicorn peer_chat_app:app --workers N``) from a Python that has
``pydantic-ai-slim[openai]``, ``starlette`` and ``uvicorn`` — not this
project's dependencies: only the benchmark imports this file.
"""

from __future__ import annotations

import os

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

provider = OpenAIProvider(base_url=os.environ["PEER_MODEL_URL"] + "/v1", api_key="unused")
agent = Agent(OpenAIChatModel("scripted", provider=provider), instructions="You help.")


async def chat(request: Request) -> Response:
    return await VercelAIAdapter.dispatch_request(request, agent=agent)


app = Starlette(routes=[Route("/api/chat", chat, methods=["POST"])])

if "PEER_READY_DIR" in os.environ:  # this worker is ready: the benchmark may start its load
    open(os.path.join(os.environ["PEER_READY_DIR"], str(os.getpid())), "w").close()
