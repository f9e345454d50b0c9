"""The finish check (amber's silent confirm turn): is the task really finished?

With ``AgentConfig(finish_check=True)``, when the model answers without
tool calls the loop asks it one hidden question (:data:`QUESTION`: the
request it just answered, its answer, then the question; no tools, a reply
of a few tokens). The question and its reply are never recorded. A reply
starting with "no" means the task is not finished: :data:`CONTINUE_NOTE` is
recorded after the answer and the loop goes on, at most
:data:`MAX_FINISH_CHECKS` times a turn; anything else (or a failed check,
logged) lets the answer stand.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..errors import AgentSmithError, CancelledError, UsageLimitExceeded
from ..llm.request import LlmRequest, LlmResponse, SamplingParams
from ..messages import AssistantMessage, UserMessage

log = logging.getLogger(__name__)

#: The hidden question.
QUESTION = (
    "Before you stop: is the user's task completely finished, with nothing left to do? "
    "Reply with only YES or NO."
)
#: Recorded when the model says the task is not finished.
CONTINUE_NOTE = UserMessage("The task is not finished yet. Continue working on it.")
#: How many times one turn is sent back to work.
MAX_FINISH_CHECKS = 2


def unfinished(
    ask: Callable[[LlmRequest], LlmResponse], request: LlmRequest, answer: AssistantMessage
) -> bool:
    """Whether the model, asked after ``answer`` to ``request``, says the task is unfinished."""
    question = LlmRequest(
        (*request.messages, answer, UserMessage(QUESTION)),
        sampling=SamplingParams(temperature=0, max_tokens=8),
    )
    try:
        reply = ask(question).message.content.strip().lower()
    except (UsageLimitExceeded, CancelledError):
        raise
    except AgentSmithError as err:
        log.warning("the finish check failed (%s): the answer stands", err)
        return False
    return reply.startswith("no")
