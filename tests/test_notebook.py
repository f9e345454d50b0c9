"""``agent_smith.notebook.show`` outside a notebook: a clear error before the turn starts.

Inside one (a real Jupyter kernel) it is tested by executing the example
notebook: tests/integration/test_examples.py.
"""

from __future__ import annotations

import pytest

from agent_smith import Agent, ConfigError, TestModel
from agent_smith.notebook import show
from agent_smith.runtime import Runtime


def test_show_outside_an_ipython_kernel_says_what_to_use_and_runs_nothing() -> None:
    model = TestModel(["never asked"])
    with Runtime(max_workers=1) as runtime, Agent(model, runtime=runtime) as agent:
        with pytest.raises(ConfigError, match=r"TurnCard\.from_events"):
            show(agent.stream("Hi"))
        assert model.requests == [] and agent.history == []
