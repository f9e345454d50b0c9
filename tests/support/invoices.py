"""Output types for the typed-output tests and benchmarks: an invoice, nested.

:class:`Invoice` has ten fields covering what a typed output may hold: a
nested dataclass, a list of dataclasses, an ``Enum``, a ``Literal``,
``Optional`` and defaulted fields. :data:`INVOICE_JSON` is a valid reply for
it and :data:`INVOICE` the instance it converts to.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Literal, Optional, TypedDict


class Currency(enum.Enum):
    EUR = "EUR"
    USD = "USD"


@dataclass(frozen=True)
class Address:
    street: str
    city: str


@dataclass(frozen=True)
class Line:
    item: str
    quantity: int
    unit_price: float


@dataclass(frozen=True)
class Invoice:
    """An invoice read from a document."""

    number: str
    customer: str
    address: Address
    currency: Currency
    status: Literal["draft", "sent", "paid"]
    lines: list[Line]
    total: float
    paid: bool
    note: Optional[str] = None  # noqa: UP045 - Optional is what users write
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class City:
    """A city, all strings (the tiny test model writes "Paris" into every string)."""

    name: str
    country: str


class _ContactName(TypedDict):
    name: str


class Contact(_ContactName, total=False):
    """Who to write to."""

    email: str


INVOICE_DATA = {
    "number": "INV-7",
    "customer": "ACME",
    "address": {"street": "1 Main St", "city": "Oslo"},
    "currency": "EUR",
    "status": "sent",
    "lines": [
        {"item": "bolts", "quantity": 100, "unit_price": 0.25},
        {"item": "nuts", "quantity": 50, "unit_price": 1},
    ],
    "total": 75,
    "paid": False,
    "note": None,
    "tags": ["hardware"],
}
INVOICE_JSON = json.dumps(INVOICE_DATA)
INVOICE = Invoice(
    number="INV-7",
    customer="ACME",
    address=Address("1 Main St", "Oslo"),
    currency=Currency.EUR,
    status="sent",
    lines=[Line("bolts", 100, 0.25), Line("nuts", 50, 1.0)],
    total=75.0,
    paid=False,
    note=None,
    tags=["hardware"],
)
