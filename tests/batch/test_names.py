from __future__ import annotations

import pytest

from agent_smith import ConfigError
from agent_smith.batch.names import check_name, resolve_name
from tests.support import batch


def test_a_name_resolves_to_the_attribute_also_nested() -> None:
    assert resolve_name("tests.support.batch:add", what="tool") is batch.add
    assert resolve_name("tests.support.batch:ShoutTool.schema", what="t") is batch.ShoutTool.schema


@pytest.mark.parametrize("name", ["", "module", "module:", ":attr", "a b:c", "mod:attr()", 3])
def test_a_malformed_name_is_refused(name: object) -> None:
    with pytest.raises(ConfigError, match="importable name"):
        check_name(name, what="tool")


def test_errors_say_what_and_which_name() -> None:
    with pytest.raises(ConfigError, match=r"spec.tools\[0\] 'no_such_module_x:f': cannot import"):
        resolve_name("no_such_module_x:f", what="spec.tools[0]")
