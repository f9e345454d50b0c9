"""One short line saying why a ``requests``/urllib3 call failed, for error messages."""

from __future__ import annotations


def request_error_cause(err: BaseException) -> str:
    """A short one-line cause for an exception from requests/urllib3."""
    inner: BaseException = err
    while inner.args and isinstance(inner.args[0], BaseException):
        inner = inner.args[0]
    reason = getattr(inner, "reason", None)
    text = str(reason if isinstance(reason, BaseException) else inner) or type(inner).__name__
    return " ".join(text.split())[:200]
