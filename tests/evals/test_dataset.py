"""Datasets: JSONL, YAML and JSON round trips, the shipped schema, and bad entries named."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from agent_smith import EvalError, ImagePart, TextPart, UserMessage
from agent_smith.evals import (
    Case,
    Check,
    Contains,
    Dataset,
    Equals,
    ExpectedCall,
    Limits,
    LlmJudge,
    OutputValid,
    Regex,
    ToolCalls,
    dataset_schema,
)
from agent_smith.messages import AssistantMessage
from tests.support.media import png

DATASET = Dataset(
    (
        Case("add", "What is 2+2?", expected="4", metadata={"tags": ["math"]}),
        Case(
            "follow-up",
            "And times three?",
            history=(UserMessage("What is 2+2?"), AssistantMessage("4")),
            expected="12",
            evaluators=(
                ToolCalls((ExpectedCall("calculator", {"expression": "4*3"}),), only=True),
                Regex(r"\b12\b"),
            ),
        ),
        Case("typed", "Give me a point", expected={"x": 1, "y": 2}, evaluators=(OutputValid(),)),
        Case(
            "picture",
            (TextPart("What colour is this?"), ImagePart("image/png", data=png())),
            expected="red",
        ),
    ),
    evaluators=(
        Contains(ignore_case=True),
        Limits(max_turns=4, max_seconds=30),
        LlmJudge("The answer is correct and short."),
        Check("tests.evals.test_dataset:always"),
        Equals(field="content"),
    ),
    name="demo",
)


def always(ctx: object) -> bool:
    return True


@pytest.mark.parametrize("suffix", [".jsonl", ".yaml", ".json"])
def test_a_dataset_comes_back_equal_from_its_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"cases{suffix}"
    DATASET.save(path)
    loaded = Dataset.load(path)
    assert loaded == DATASET
    assert loaded.invalid == ()


def test_the_shipped_schema_accepts_a_saved_dataset_and_refuses_a_bad_one(tmp_path: Path) -> None:
    schema = dataset_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(DATASET.to_dict(), schema)
    for case in DATASET.to_dict()["cases"]:
        jsonschema.validate(case, {"$defs": schema["$defs"], "$ref": "#/$defs/case"})
    bad = {"cases": [{"id": "a", "input": "x", "evaluators": [{"type": "nope"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_a_malformed_line_is_an_error_naming_its_line_and_the_other_cases_load(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        '{"id": "a", "input": "one"}\n'
        "{not json\n"
        '{"id": "b", "input": "two", "evaluators": [{"type": "sentiment"}]}\n'
        '{"id": "c"}\n'
        '{"id": "d", "input": "four"}\n',
        encoding="utf-8",
    )
    dataset = Dataset.load(path)
    assert [c.id for c in dataset.cases] == ["a", "d"]
    first, unknown, no_input = dataset.invalid  # in file order
    assert f"{path}:2: not valid JSON" in str(first)
    assert unknown.case == "b" and "unknown evaluator 'sentiment'" in str(unknown)
    assert f"{path}:3: case b" in str(unknown) and "known: contains" in str(unknown)
    assert no_input.case == "c" and "'input' must be a string" in str(no_input)
    with pytest.raises(EvalError, match="not valid JSON"):
        Dataset.load(path, strict=True)


def test_a_setting_an_evaluator_does_not_take_names_the_case(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    case = {"id": "x", "input": "?", "evaluators": [{"type": "contains", "needle": "a"}]}
    path.write_text(json.dumps({"cases": [case]}), encoding="utf-8")
    (error,) = Dataset.load(path).invalid
    assert error.case == "x" and "evaluator 'contains'" in str(error) and "needle" in str(error)


def test_a_repeated_case_id_is_refused_and_the_first_kept(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": 1, "input": "a"}\n{"id": "1", "input": "b"}\n', encoding="utf-8")
    dataset = Dataset.load(path)
    assert [(c.id, c.input) for c in dataset.cases] == [("1", "a")]
    assert "the id is used twice" in str(dataset.invalid[0])


def test_a_python_evaluator_given_as_a_function_cannot_be_written_to_a_file(
    tmp_path: Path,
) -> None:
    dataset = Dataset((Case("a", "?", evaluators=(Check(always),)),))
    with pytest.raises(EvalError, match="'always' is a function object"):
        dataset.save(tmp_path / "x.jsonl")


def test_a_yaml_file_with_a_judge_model_is_refused_naming_the_case(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(
        "cases:\n  - id: j\n    input: hi\n    evaluators:\n"
        "      - {type: judge, rubric: polite, model: gpt}\n",
        encoding="utf-8",
    )
    (error,) = Dataset.load(path).invalid
    assert error.case == "j" and "has no model" in str(error)


def test_a_case_input_of_parts_that_is_not_parts_names_the_case(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    line = {"id": "pic", "input": [{"type": "image", "media_type": "image/png", "data": "@@"}]}
    path.write_text(json.dumps(line) + "\n" + json.dumps({"id": "ok", "input": "hi"}) + "\n")
    loaded = Dataset.load(path)
    assert [c.id for c in loaded.cases] == ["ok"]
    (error,) = loaded.invalid
    assert error.case == "pic" and "input" in str(error)
