"""An OpenTelemetry SDK provider for the tracing tests, active only while a test asks.

A global tracer provider can be set once per process, so the first test that
needs spans installs one for the rest of the session. Outside the ``spans``
fixture its tracers hand out the API's invalid no-op span, as if no provider
were set: later tests in the same process go through the library's live
tracing code yet see nothing traced (no span, no ``traceparent``). Inside,
the SDK's tracer records everything (unless a test turns sampling off).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes


class _Switch(Sampler):
    """``on``: the tracers are live; ``sample``: the SDK samples what they start."""

    def __init__(self) -> None:
        self.on = False
        self.sample = True

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        decision = Decision.RECORD_AND_SAMPLE if self.sample else Decision.DROP
        return SamplingResult(decision, attributes)

    def get_description(self) -> str:
        return "tests.tracing switch"


_SWITCH = _Switch()
_EXPORTER = InMemorySpanExporter()
_NO_OP = trace.NoOpTracer()


class _SwitchedTracer(trace.Tracer):
    """The SDK's tracer while the switch is on, the API's no-op tracer otherwise."""

    def __init__(self, real: trace.Tracer) -> None:
        self._real = real

    def _current(self) -> trace.Tracer:
        return self._real if _SWITCH.on else _NO_OP

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return self._current().start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._current().start_as_current_span(*args, **kwargs)


class _SwitchedProvider(trace.TracerProvider):
    def __init__(self, sdk: TracerProvider) -> None:
        self.sdk = sdk

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return _SwitchedTracer(self.sdk.get_tracer(*args, **kwargs))


class Spans:
    """The spans finished while a test ran, with the look-ups the tests need."""

    def all(self) -> list[ReadableSpan]:
        return list(_EXPORTER.get_finished_spans())

    def ours(self) -> list[ReadableSpan]:
        """Spans made by agent_smith (not by the test or another library)."""
        return [s for s in self.all() if s.instrumentation_scope.name == "agent_smith"]

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.ours() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, (name, [s.name for s in self.ours()])
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        assert parent.context is not None
        return [
            s
            for s in self.ours()
            if s.parent is not None and s.parent.span_id == parent.context.span_id
        ]

    def parent_of(self, span: ReadableSpan) -> ReadableSpan:
        assert span.parent is not None, span.name
        for candidate in self.all():
            assert candidate.context is not None
            if candidate.context.span_id == span.parent.span_id:
                return candidate
        raise AssertionError(f"parent of {span.name} was not exported")

    def text(self) -> str:
        """Everything every exported span says, as one string (to look for secrets in)."""
        return "\n".join(json.dumps(_dump(s), default=str) for s in self.all())


def _dump(span: ReadableSpan) -> dict[str, Any]:
    return {
        "name": span.name,
        "attributes": dict(span.attributes or {}),
        "status": span.status.description,
        "events": [(e.name, dict(e.attributes or {})) for e in span.events],
        "links": [dict(link.attributes or {}) for link in span.links],
        "resource": dict(span.resource.attributes),
    }


@pytest.fixture(scope="session")
def _provider() -> trace.TracerProvider:
    sdk = TracerProvider(sampler=_SWITCH)
    sdk.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    provider = _SwitchedProvider(sdk)
    trace.set_tracer_provider(provider)
    return provider


@pytest.fixture
def spans(_provider: trace.TracerProvider) -> Iterator[Spans]:
    """Record every span made during the test (our SDK provider is the global one)."""
    _EXPORTER.clear()
    _SWITCH.on, _SWITCH.sample = True, True
    try:
        yield Spans()
    finally:
        _SWITCH.on = False
        _EXPORTER.clear()


@pytest.fixture
def tracer(_provider: trace.TracerProvider) -> trace.Tracer:
    """A tracer for the test's own spans (a web request's, say)."""
    return _provider.get_tracer("tests")
