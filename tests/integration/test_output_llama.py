"""Typed output end to end against a real llama.cpp server (see conftest.py for which one).

Under a ``json_schema`` grammar (native mode) even a 0.5B model (the default
local model the tests serve) can only write JSON that fits the schema, so the
agent must return a valid instance; in tool mode the model must call
``final_result`` (natively or as text the agent recovers), which that model
may not do. The assertions are on types and structure, for any model. The native test takes about
3 s on an idle two-core machine (grammar-constrained sampling checks the
tiny model's 151k-token vocabulary at every rejected token) and longer
under load; it is the one end-to-end proof of a nested instance.
"""

from __future__ import annotations

import json

import pytest

from agent_smith import (
    Agent,
    AgentRequest,
    AgentStopped,
    FinalAnswer,
    LlmClient,
    OutputValidationError,
    Runtime,
    SamplingParams,
    TokenDelta,
)
from agent_smith.llm.local_server import LocalLlamaServer
from tests.integration.conftest import LlamaEndpoint
from tests.support.invoices import Address, City, Currency, Invoice, Line

pytestmark = [pytest.mark.slow, pytest.mark.llama, pytest.mark.usefixtures("no_thread_leak")]

#: Bounded so a model that never closes its JSON fails instead of running on.
SAMPLING = SamplingParams(temperature=0, max_tokens=768)
#: For a City: a reply that runs past this is wrong anyway, and each retry costs it.
SHORT = SamplingParams(temperature=0, max_tokens=96)


@pytest.fixture
def llm(llama_endpoint: LlamaEndpoint, runtime: Runtime) -> LlmClient:
    return llama_endpoint.client(runtime, SAMPLING)


def test_native_mode_yields_a_valid_nested_instance_streamed(
    llm: LlmClient, llama_endpoint: LlamaEndpoint
) -> None:
    agent = Agent(llm, "Extract the invoice as JSON.")
    request = AgentRequest(
        "Invoice INV-7 to ACME, 1 Main St, Oslo: 100 bolts at 0.25 EUR, sent, unpaid.",
        stream=True,
        output_type=Invoice,
    )
    events = list(agent.stream(request))
    reply = next(e.message for e in events if isinstance(e, FinalAnswer))
    invoice = reply.output
    assert isinstance(invoice, Invoice)
    assert isinstance(invoice.address, Address) and isinstance(invoice.currency, Currency)
    assert all(isinstance(line, Line) for line in invoice.lines)
    assert invoice.status in ("draft", "sent", "paid")
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == reply.content
    json.loads(reply.content)  # .content is the raw JSON the server sent


def test_tool_mode_final_result_call_yields_an_instance_or_says_it_was_not_called(
    llama_endpoint: LlamaEndpoint, runtime: Runtime
) -> None:
    llm = llama_endpoint.client(runtime, SHORT)
    agent = Agent(llm, "Answer by calling final_result.")
    try:
        reply = agent.send(
            "Which city is the capital of France?", output_type=City, output_mode="tool"
        )
    except OutputValidationError as err:
        # The default local model (0.5B) may never call final_result, natively
        # or as text the agent recovers: then the turn says so, after its retries.
        assert err.attempts == 3 and "final_result" in str(err)
        return
    except AgentStopped as err:
        # ... or write the city itself as a call ({"name": "Paris", ...}): a written call
        # runs whatever name it gives (an unknown tool is an error result the model reads),
        # and the same unknown call three times is the loop guard's stop.
        assert err.condition == "loop_detected" and "final_result" not in str(err), err
        return
    assert isinstance(reply.output, City)
    assert json.loads(reply.content) == {"name": reply.output.name, "country": reply.output.country}


def test_prompted_mode_without_a_grammar_for_the_schema_exhausts_its_retries(
    local_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    # json_object only constrains the reply to some JSON object: the default
    # local model (0.5B) writes one that never fits a City (measured: it echoes
    # the schema it was shown).
    local = LlmClient(local_llama.endpoint, "local", default_sampling=SHORT, runtime=runtime)
    agent = Agent(local)
    with pytest.raises(OutputValidationError) as caught:
        agent.send("Where?", output_type=City, output_mode="prompted")
    assert caught.value.attempts == 3
    assert isinstance(json.loads(caught.value.raw), dict)
    assert "'name' is a required property" in caught.value.errors
    assert (
        len(agent.history) == 6
    )  # user, then three replies each followed by feedback but the last
