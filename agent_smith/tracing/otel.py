"""Whether tracing is on, and the OpenTelemetry context plumbing the other modules share.

Tracing is on once the application has imported ``opentelemetry.trace`` and
set a real tracer provider. Until then :func:`tracer` returns ``None`` after a
dictionary lookup, and nothing of OpenTelemetry is imported by us: an
application that has the package installed (the ``mcp`` SDK depends on it)
but does not use it pays nothing. We only ever call
``trace.get_tracer("agent_smith")``, the context API and ``propagate.inject``;
the provider, exporters, samplers and propagators are the application's.

Threads do not inherit the OpenTelemetry context, which lives in a
:mod:`contextvars` variable: the worker pool (and every thread we start for a
call) runs its work in a copy of the submitting thread's context, so spans
made there (and a sub-agent's whole tree) keep their parent with no call of
ours.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._version import __version__

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer
    from opentelemetry.util.types import AttributeValue

_tracer: Tracer | None = None
_api: Api | None = None


class Api:
    """The parts of the OpenTelemetry API we use, looked up once (imports cost ~1 µs each)."""

    def __init__(self) -> None:
        from opentelemetry import context, propagate, trace

        self.attach = context.attach
        self.detach = context.detach
        self.get_current = context.get_current
        self.inject = propagate.inject  # reads the global propagator at each call
        self.set_span_in_context = trace.set_span_in_context
        self.get_current_span = trace.get_current_span
        self.SpanKind = trace.SpanKind
        self.Status = trace.Status
        self.StatusCode = trace.StatusCode


def api() -> Api:
    """The OpenTelemetry API; call only once :func:`tracer` returned a tracer."""
    global _api
    if _api is None:
        _api = Api()
    return _api


def tracer() -> Tracer | None:
    """The ``agent_smith`` tracer once the application configured a provider, else None."""
    global _tracer
    if _tracer is not None:
        return _tracer
    api = sys.modules.get("opentelemetry.trace")
    if api is None:
        return None  # the application does not use OpenTelemetry
    try:
        provider = api.get_tracer_provider()
        if isinstance(provider, (api.ProxyTracerProvider, api.NoOpTracerProvider)):
            return None  # no provider set (yet): the API would only make no-op spans
    except AttributeError:  # another thread is importing the module right now
        return None
    # A global provider can be set only once, so the tracer never goes stale.
    _tracer = api.get_tracer("agent_smith", __version__)
    return _tracer


def add_event(name: str, attributes: Mapping[str, AttributeValue] | None = None) -> None:
    """Add an event to the current span (the running turn's, inside a turn)."""
    if tracer() is None:
        return
    api().get_current_span().add_event(name, attributes or {})
