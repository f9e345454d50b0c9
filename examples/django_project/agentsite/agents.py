"""The agent of the project: its model, its tools, and the WebApp that serves it."""

from __future__ import annotations

from django.conf import settings

from agent_smith import Agent, LlmClient, Session, WebApp, tool
from agent_smith.llm.model import ChatModel
from agent_smith.web.django import django_user

#: The model every request's agent talks to (tests replace it with a TestModel).
llm: ChatModel = LlmClient(settings.LLAMA_SERVER_URL)


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city (a stand-in for a real weather API)."""
    return f"Sunny and 21 °C in {city}."


@tool(requires_approval=True)
def save_note(text: str) -> str:
    """Save a note for the user (each note needs the user's approval)."""
    return f"Saved note: {text}"


def build_agent(conversation: Session) -> Agent:
    """A fresh agent on one conversation, for one request."""
    return Agent(
        llm, "You are a helpful assistant.", [get_weather, save_note], session=conversation
    )


#: Conversations belong to Django's users: ``django_user`` is the logged-in user's id.
agent_app = WebApp(build_agent, sessions=settings.AGENT_SMITH_SESSIONS, authenticate=django_user)
