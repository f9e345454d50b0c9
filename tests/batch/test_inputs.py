from __future__ import annotations

from pathlib import Path

import pytest

from agent_smith import BatchInput, ConfigError, read_inputs
from agent_smith.batch.inputs import as_inputs


def test_inputs_may_be_objects_mappings_or_strings() -> None:
    items = as_inputs(
        [BatchInput("a", "first"), {"id": "b", "input": "second", "expected": "x"}, "third"]
    )
    assert items == [BatchInput("a", "first"), BatchInput("b", "second"), BatchInput("2", "third")]


def test_integer_ids_become_strings() -> None:
    assert as_inputs([{"id": 7, "input": "x"}]) == [BatchInput("7", "x")]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([{"input": "x"}], 'needs the keys "id" and "input"'),
        ([{"id": "a", "input": 3}], '"input" a string'),
        ([{"id": True, "input": "x"}], '"id" must be a string'),
        ([{"id": "", "input": "x"}], "must not be empty"),
        ([12], "must be a string or an object"),
        (
            [{"id": "a", "input": "x"}, {"id": "a", "input": "y"}],
            "batch input 1: the id 'a' is used twice",
        ),
    ],
)
def test_bad_inputs_are_config_errors(raw: list[object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        as_inputs(raw)  # type: ignore[arg-type]


def test_read_inputs_skips_blank_lines_and_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "a", "input": "x"}\n\n"plain"\n', encoding="utf-8")
    assert read_inputs(path) == [BatchInput("a", "x"), BatchInput("1", "plain")]
    path.write_text('{"id": "a", "input": "x"}\n\n{"id": "a", "input": "y"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"in\.jsonl:3: the id 'a' is used twice"):
        read_inputs(path)
    path.write_text('{"id": "a", "input": "x"}\n{oops\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"in\.jsonl:2: not valid JSON"):
        read_inputs(path)
    path.write_text("[" * 100_000 + "\n", encoding="utf-8")  # deeper than the parser goes
    with pytest.raises(ConfigError, match=r"in\.jsonl:1: not valid JSON \(nested too deeply\)"):
        read_inputs(path)
    with pytest.raises(ConfigError, match="cannot read inputs"):
        read_inputs(tmp_path / "missing.jsonl")
