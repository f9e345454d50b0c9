"""What the fuzz tests share: arbitrary JSON values, byte splits, and a moderate budget.

The budgets keep the suite fast (a few seconds for all fuzz tests); raise
``max_examples`` locally when hunting.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

#: Settings for pure parsers (microseconds an example).
QUICK = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Settings for tests that touch files or a database per example.
SLOW = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()

#: Any JSON value, nested a few levels.
json_values: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def json_objects_with(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects that use the given keys (with arbitrary values) more often than chance."""
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=8), json_values, max_size=5)


@st.composite
def split(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """``data`` cut into chunks at arbitrary points."""
    cuts = sorted(draw(st.sets(st.integers(0, len(data)), max_size=6)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


#: Nesting deeper than the stdlib JSON parser follows (it recurses per level).
TOO_DEEP = "[" * 100_000
