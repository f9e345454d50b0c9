"""OpenTelemetry tracing of agents, LLM calls, tool calls and MCP requests (GenAI conventions).

Private to the library: the rest of agent_smith calls a few small functions
of these modules, each importing only the one it needs (so importing the
package costs nothing). Users turn tracing on by configuring OpenTelemetry in
their application, and content recording with ``Runtime(trace_content=True)``.

* Optional: the ``otel`` extra installs ``opentelemetry-api``. Nothing here
  imports it until the application has (see :mod:`.otel`); without it every
  function returns at once and every span handle does nothing.
* Spans (:mod:`.agent_span`, :mod:`.chat_span`, :mod:`.tool_span`,
  :mod:`.mcp_span`): ``invoke_agent {name}`` per turn, ``chat {model}`` per
  LLM call, ``execute_tool {tool}`` per tool call, one client span per MCP
  request; every attribute name is in :mod:`.names`.
* Threads: the worker pool runs each submitted call in a copy of its
  submitter's ``contextvars`` context, where OpenTelemetry keeps the current
  span, so tool spans are children of their turn's
  span and a sub-agent's turn a child of the tool call that started it.
* Privacy: no prompt, reply, tool argument or result is recorded unless the
  runtime says ``trace_content=True``, and then only after ``redact()``
  (:mod:`.content`). The library never sets a provider, exporter or propagator.
"""
