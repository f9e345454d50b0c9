"""Output types: the schema the model sees (wrapped, strict or not) and text -> T."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any, Literal

import pydantic
import pytest

from agent_smith import ConfigError, OutputValidationError, ParseError, parse_output
from agent_smith.agent.output_type import output_schema
from tests.support.invoices import INVOICE, INVOICE_DATA, INVOICE_JSON, City, Contact, Invoice


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


class Person(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0)


@dataclass
class Positive:
    value: int

    def __post_init__(self) -> None:
        if self.value <= 0:
            raise ValueError("value must be positive")


@pytest.mark.parametrize(
    ("output_type", "text", "expected"),
    [
        (Invoice, INVOICE_JSON, INVOICE),
        (Contact, '{"name": "Ann"}', {"name": "Ann"}),
        (Mood, '{"response": "sad"}', Mood.SAD),
        (Literal["yes", "no"], '{"response": "no"}', "no"),
        (str, '{"response": "hi"}', "hi"),
        (int, '{"response": 3}', 3),
        (float, '{"response": 3}', 3.0),
        (bool, '{"response": true}', True),
        (list[City], '{"response": [{"name": "Oslo", "country": "NO"}]}', [City("Oslo", "NO")]),
        (Person, '{"name": "Bo", "age": 4}', Person(name="Bo", age=4)),
        (City, '```json\n{"name": "Oslo", "country": "NO"}\n```', City("Oslo", "NO")),
    ],
)
def test_every_supported_type_parses_into_an_instance(
    output_type: Any, text: str, expected: Any
) -> None:
    value = parse_output(output_type, text)
    assert value == expected
    assert type(value) is type(expected)


def test_non_object_types_are_wrapped_in_a_response_object() -> None:
    schema = output_schema(int)
    assert schema.wrapped and schema.name == "int"
    assert schema.schema == {
        "type": "object",
        "properties": {"response": {"type": "integer"}},
        "required": ["response"],
        "additionalProperties": False,
    }
    assert not output_schema(Invoice).wrapped
    assert output_schema(list[City]).name == "output"


def test_strict_only_when_every_object_is_closed_and_fully_required() -> None:
    assert output_schema(City).strict
    assert output_schema(int).strict
    assert output_schema(list[City]).strict
    assert not output_schema(Invoice).strict  # note and tags have defaults
    assert not output_schema(Contact).strict  # email is optional
    assert not output_schema(Person).strict  # pydantic leaves objects open
    assert not output_schema(dict[str, int]).strict


def test_the_description_comes_from_the_docstring() -> None:
    assert output_schema(Invoice).description == "An invoice read from a document."
    assert output_schema(Positive).description == ""  # dataclass's invented docstring is dropped
    assert output_schema(int).description == ""


def test_schemas_are_built_once_per_type() -> None:
    assert output_schema(Invoice) is output_schema(Invoice)


@pytest.mark.parametrize(
    ("output_type", "text", "error"),
    [
        (City, "Oslo, Norway", "the reply is not valid JSON"),
        (City, '{"name": "Oslo"}', "'country' is a required property"),
        (City, '{"name": 1, "country": "NO"}', "at 'name': 1 is not of type 'string'"),
        (Invoice, json.dumps({**INVOICE_DATA, "status": "lost"}), "at 'status': 'lost' is not"),
        (Positive, '{"value": -1}', "Positive rejected the value: value must be positive"),
        (Person, '{"name": "Bo", "age": -1}', "at 'age': -1 is less than the minimum of 0"),
    ],
)
def test_a_reply_that_does_not_fit_says_exactly_why(
    output_type: Any, text: str, error: str
) -> None:
    with pytest.raises(OutputValidationError) as caught:
        parse_output(output_type, text)
    assert isinstance(caught.value, ParseError)
    assert caught.value.raw == text
    assert error in caught.value.errors[0]


def test_all_problems_are_reported_not_only_the_first() -> None:
    with pytest.raises(OutputValidationError) as caught:
        parse_output(City, '{"name": 1, "country": 2, "extra": true}')
    assert len(caught.value.errors) == 3


@pytest.mark.parametrize("output_type", [object, dict[int, str], None, type(None), [1, 2]])
def test_types_without_a_json_form_are_config_errors(output_type: Any) -> None:
    with pytest.raises(ConfigError):
        output_schema(output_type)


def test_a_problem_quoting_a_huge_value_is_cut_and_the_message_stays_one_line() -> None:
    text = json.dumps({"name": ["x" * 5000], "country": "NO"})
    with pytest.raises(OutputValidationError) as caught:
        parse_output(City, text)
    error = caught.value.errors[0]
    assert error.startswith("at 'name': ['xxx") and "[truncated, original size" in error
    assert len(error.encode()) < 400
    assert "\n" not in str(caught.value)
    assert caught.value.raw == text  # the raw reply itself is kept whole


@pytest.mark.parametrize(
    ("output_type", "text", "expected"),
    [
        (Mood, '"sad"', Mood.SAD),  # what small models answer for an enum
        (int, "42", 42),
        (list[int], "[1, 2]", [1, 2]),
        (Invoice, json.dumps({"response": INVOICE_DATA}), INVOICE),  # wrapped unasked
    ],
)
def test_a_reply_with_the_wrapper_missing_or_added_is_accepted(
    output_type: Any, text: str, expected: Any
) -> None:
    assert parse_output(output_type, text) == expected


def test_a_wrong_bare_value_is_reported_as_the_value_it_meant_to_be() -> None:
    with pytest.raises(OutputValidationError) as info:
        parse_output(Mood, '"angry"')
    assert "'angry' is not one of ['happy', 'sad']" in " ".join(info.value.errors)
    with pytest.raises(OutputValidationError):
        parse_output(Invoice, json.dumps({"response": {"number": 1}}))
