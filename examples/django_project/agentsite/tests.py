"""The project's own tests, with Django's test client: ``python manage.py test agentsite``.

The model is agent_smith's in-process ``TestModel`` (scripted replies, no
server), put in place of ``agents.llm`` for each test.
"""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from django.contrib.auth.models import User
from django.test import Client, TestCase

from agent_smith.llm.testing import TestModel, call

from . import agents


def chat(conversation: str, text: str) -> str:
    """What useChat posts for a new user message."""
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}
    return json.dumps({"id": conversation, "messages": [message], "trigger": "submit-message"})


def decision(conversation: str, call_id: str, approved: bool) -> str:
    """What useChat posts once the user approved or denied a call."""
    part = {
        "type": "dynamic-tool",
        "toolName": "save_note",
        "toolCallId": call_id,
        "state": "approval-responded",
        "input": {},
        "approval": {"id": call_id, "approved": approved},
    }
    message = {"id": "a1", "role": "assistant", "parts": [part]}
    return json.dumps({"id": conversation, "messages": [message]})


def frames(response: Any) -> list[Any]:
    """The JSON frames of a streamed answer."""
    text = b"".join(response.streaming_content).decode()
    return [
        json.loads(line[len("data: ") :])
        for line in text.splitlines()
        if line.startswith("data: {")
    ]


class AgentEndpointsTest(TestCase):
    def setUp(self) -> None:
        self.ada = Client()
        self.ada.force_login(User.objects.create_user("ada", password="lovelace-1815"))
        self.bob = Client()
        self.bob.force_login(User.objects.create_user("bob", password="babbage-1791"))

    def post(self, client: Client, body: str) -> Any:
        return client.post("/agent/api/chat", body, content_type="application/json")

    def test_pages_and_endpoints_need_a_logged_in_user(self) -> None:
        anonymous = Client()
        self.assertEqual(anonymous.get("/").status_code, 302)
        self.assertEqual(anonymous.get("/agent/api/conversations").status_code, 401)
        self.assertEqual(self.post(anonymous, chat("c-anon", "hi")).status_code, 401)
        self.assertIn(b"Chat with the agent", self.ada.get("/").content)

    def test_a_turn_streams_its_answer_and_runs_the_tool(self) -> None:
        model = TestModel([call("get_weather", city="Paris"), "Sunny and 21 °C in Paris."])
        with mock.patch.object(agents, "llm", model):
            answer = self.post(self.ada, chat("c-weather", "Weather in Paris?"))
        self.assertEqual(answer.status_code, 200)
        texts = "".join(f["delta"] for f in frames(answer) if f["type"] == "text-delta")
        self.assertEqual(texts, "Sunny and 21 °C in Paris.")
        self.assertEqual(model.requests[1].messages[-1].content, "Sunny and 21 °C in Paris.")

    def test_conversations_belong_to_the_django_user(self) -> None:
        with mock.patch.object(agents, "llm", TestModel(["Hello Ada."])):
            frames(self.post(self.ada, chat("c-ada", "Hello")))
        listed = self.ada.get("/agent/api/conversations").json()
        self.assertEqual([c["id"] for c in listed], ["c-ada"])
        self.assertEqual(self.bob.get("/agent/api/conversations").json(), [])
        self.assertEqual(self.bob.get("/agent/api/conversations/c-ada").status_code, 404)
        self.assertEqual(self.ada.get("/agent/api/conversations/c-ada").status_code, 200)

    def test_an_approval_pauses_the_turn_and_the_decision_resumes_it(self) -> None:
        asked = call("save_note", text="milk")
        model = TestModel([asked, "Saved your note."])
        with mock.patch.object(agents, "llm", model):
            paused = frames(self.post(self.ada, chat("c-note", "Note: milk")))
            waiting = [f for f in paused if f["type"] == "tool-approval-request"]
            self.assertEqual([f["toolCallId"] for f in waiting], [asked.id])
            resumed = frames(self.post(self.ada, decision("c-note", asked.id, True)))
        outputs = [f["output"] for f in resumed if f["type"] == "tool-output-available"]
        self.assertEqual(outputs, ["Saved note: milk"])
