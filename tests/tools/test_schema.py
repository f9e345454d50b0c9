"""type_schema beyond tool parameters: TypedDict classes and duck-typed pydantic models."""

from __future__ import annotations

from typing import Any, Optional

import pydantic
import pytest

from agent_smith import ConfigError
from agent_smith.tools.schema import is_model_class, is_typeddict, type_schema
from tests.support.invoices import Contact, Invoice


class Part(pydantic.BaseModel):
    sku: str


class Order(pydantic.BaseModel):
    """An order."""

    parts: list[Part]
    spare: Optional[Part] = None  # noqa: UP045


class Tree(pydantic.BaseModel):
    children: list[Tree]


def test_typeddict_gives_an_object_with_its_required_keys() -> None:
    assert is_typeddict(Contact) and not is_typeddict(dict)
    assert type_schema(Contact) == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
        "description": "Who to write to.",
    }


def test_pydantic_model_schema_is_its_own_with_defs_inlined() -> None:
    assert is_model_class(Order) and not is_model_class(Invoice)
    schema = type_schema(Order)
    assert "$defs" not in schema
    assert schema["description"] == "An order."
    part = {"properties": {"sku": {"title": "Sku", "type": "string"}}, "required": ["sku"]}
    assert schema["properties"]["parts"]["items"] == {**part, "title": "Part", "type": "object"}
    spare = schema["properties"]["spare"]["anyOf"][0]
    assert spare["properties"] == part["properties"]


def test_a_pydantic_model_nests_inside_a_list_and_resolves_there() -> None:
    import jsonschema

    schema = type_schema(list[Order])
    jsonschema.validate([{"parts": [{"sku": "a"}]}], schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{"parts": [{"sku": 1}]}], schema)


def test_recursive_pydantic_models_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="recursive"):
        type_schema(Tree)


def test_a_duck_typed_model_whose_schema_hook_fails_is_a_config_error() -> None:
    class Broken:
        @classmethod
        def model_json_schema(cls) -> dict[str, Any]:
            raise RuntimeError("no schema today")

        @classmethod
        def model_validate(cls, value: Any) -> Broken:
            return cls()

    with pytest.raises(ConfigError, match="no schema today"):
        type_schema(Broken)
