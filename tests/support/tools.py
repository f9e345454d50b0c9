"""What tool tests hand to ``Tool.invoke``: a ToolContext on a given runtime."""

from __future__ import annotations

import logging

from agent_smith import CancellationSource, Runtime, ToolContext


def tool_context(
    runtime: Runtime, *, budget: float = 30.0, cancel: CancellationSource | None = None
) -> ToolContext:
    """A root-level call's context (id ``call-1``), cancelled through ``cancel`` if given."""
    return ToolContext(
        cancel=(cancel or CancellationSource()).token,
        budget=budget,
        call_id="call-1",
        logger=logging.getLogger("test"),
        runtime=runtime,
    )
