"""JSON values -> annotated types (tool arguments, typed outputs) and back."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Literal, Optional, Union

import pydantic
import pytest

from agent_smith.tools.convert import convert_value, converter, to_json_value
from tests.support.invoices import INVOICE, INVOICE_DATA, Contact, Invoice


class Size(enum.Enum):
    S = "s"
    L = "l"


@dataclasses.dataclass
class Cat:
    name: str


@dataclasses.dataclass
class Dog:
    name: str
    barks: bool


@dataclasses.dataclass
class Node:
    value: int
    next: Optional[Node] = None  # noqa: UP045


class Model(pydantic.BaseModel):
    size: Size
    weight: float


def test_nested_dataclass_with_enum_literal_optional_and_defaults_converts() -> None:
    assert convert_value(INVOICE_DATA, Invoice) == INVOICE
    without_defaults = {k: v for k, v in INVOICE_DATA.items() if k not in ("note", "tags")}
    assert convert_value(without_defaults, Invoice).tags == []


def test_scalars_containers_and_typeddict_convert() -> None:
    assert convert_value(2, float) == 2.0 and isinstance(convert_value(2, float), float)
    assert convert_value(True, float) is True  # a bool is not a number to widen
    assert convert_value([1, 2], set[int]) == {1, 2}
    assert convert_value([1, "a"], tuple[int, str]) == (1, "a")
    assert convert_value(["s", "l"], tuple[Size, ...]) == (Size.S, Size.L)
    assert convert_value({"a": "s"}, dict[str, Size]) == {"a": Size.S}
    assert convert_value("l", Literal["s", "l"]) == "l"
    assert convert_value(None, Size) is None
    assert convert_value({"name": "x", "extra": 1}, Contact) == {"name": "x", "extra": 1}


def test_a_union_converts_with_the_first_member_the_value_fits() -> None:
    assert convert_value({"name": "Rex", "barks": True}, Union[Cat, Dog]) == Dog("Rex", True)  # noqa: UP007
    assert convert_value({"name": "Tom"}, Cat | Dog) == Cat("Tom")
    assert convert_value("text", int | str) == "text"


def test_a_self_referential_dataclass_converts() -> None:
    assert convert_value({"value": 1, "next": {"value": 2}}, Node) == Node(1, Node(2))


def test_pydantic_models_convert_through_model_validate() -> None:
    assert convert_value({"size": "s", "weight": 2}, Model) == Model(size=Size.S, weight=2.0)
    with pytest.raises(pydantic.ValidationError):
        convert_value({"size": "xl", "weight": 2}, Model)


def test_converters_are_built_once_per_annotation() -> None:
    assert converter(Invoice) is converter(Invoice)
    assert converter(list[Invoice]) is converter(list[Invoice])


def test_unknown_dataclass_keys_are_dropped() -> None:
    assert convert_value({"name": "Tom", "age": 3}, Cat) == Cat("Tom")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (INVOICE, INVOICE_DATA),  # 75 == 75.0: floats compare equal to the ints sent
        (Size.S, "s"),
        ({1, 2}, [1, 2]),
        (Model(size=Size.L, weight=1.5), {"size": "l", "weight": 1.5}),
        ([Cat("a"), (Size.S,)], [{"name": "a"}, ["s"]]),
    ],
)
def test_to_json_value_unpacks_dataclasses_enums_models_and_sets(value: Any, expected: Any) -> None:
    assert to_json_value(value) == expected
