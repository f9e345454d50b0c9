"""A stand-in for ``input()``: answers from a script, and what it was asked."""

from __future__ import annotations

from collections.abc import Callable


def scripted_read(*replies: str | BaseException) -> tuple[Callable[[str], str], list[str]]:
    """A ``read(prompt)`` that returns (or raises) ``replies`` in turn; and the prompts it got."""
    prompts: list[str] = []
    answers = list(replies)

    def read(prompt: str) -> str:
        prompts.append(prompt)
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    return read, prompts
