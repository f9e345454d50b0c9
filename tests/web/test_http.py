"""The HTTP edge: cross-site checks and JSON bodies within a limit."""

from __future__ import annotations

import io
from typing import Any

import pytest

from agent_smith.web.http import Refused, cross_site_refusal, read_json


def environ(**headers: str) -> dict[str, Any]:
    return {"HTTP_HOST": "app.example:8000", **headers}


@pytest.mark.parametrize(
    ("headers", "refused"),
    [
        ({}, False),  # not from a browser page
        ({"HTTP_SEC_FETCH_SITE": "same-origin"}, False),
        ({"HTTP_SEC_FETCH_SITE": "none"}, False),  # typed in the address bar
        ({"HTTP_SEC_FETCH_SITE": "same-site"}, True),
        ({"HTTP_SEC_FETCH_SITE": "cross-site"}, True),
        ({"HTTP_ORIGIN": "http://app.example:8000"}, False),
        ({"HTTP_ORIGIN": "https://evil.example"}, True),
        ({"HTTP_ORIGIN": "null"}, True),
        ({"HTTP_ORIGIN": "https://ui.example", "HTTP_SEC_FETCH_SITE": "cross-site"}, False),
    ],
)
def test_cross_site_requests_are_told_apart(headers: dict[str, str], refused: bool) -> None:
    allowed = {"https://ui.example"}
    assert (cross_site_refusal(environ(**headers), allowed) is not None) is refused


def body(data: bytes, **extra: str) -> dict[str, Any]:
    return {
        "CONTENT_TYPE": "application/json; charset=utf-8",
        "CONTENT_LENGTH": str(len(data)),
        "wsgi.input": io.BytesIO(data),
        **extra,
    }


def test_reads_a_json_body() -> None:
    assert read_json(body(b'{"a": 1}'), limit=100) == {"a": 1}


def test_a_body_without_length_is_read_up_to_the_limit() -> None:
    env = body(b"[1, 2]")
    del env["CONTENT_LENGTH"]
    assert read_json(env, limit=100) == [1, 2]
    env = body(b"[" + b"1," * 100 + b"1]")
    del env["CONTENT_LENGTH"]
    with pytest.raises(Refused) as refused:
        read_json(env, limit=100)
    assert refused.value.response.status == 413


@pytest.mark.parametrize(
    ("env", "status"),
    [
        (body(b"{}", CONTENT_TYPE="text/plain"), 415),
        (body(b"{}", CONTENT_LENGTH="many"), 400),
        (body(b"x" * 101), 413),
        (body(b"{nope"), 400),
        (body(b"\xff\xfe"), 400),
    ],
)
def test_bad_bodies_are_refused_with_a_json_error(env: dict[str, Any], status: int) -> None:
    with pytest.raises(Refused) as refused:
        read_json(env, limit=100)
    response = refused.value.response
    assert response.status == status
    assert response.body.startswith(b'{"error": ')
