"""Response generation: answer one held-out question in the voice of one personality.

The prompt holds the paper's instruction ("Speak as c. Answer the following question as c would."),
the personality_id, the context the generation strategy selected (nothing, a profile text, or
training question/response examples), then the new question, and asks for one response only.

The held-out pair enters only as its *question text*: ``build_messages`` accepts a ``str`` and
refuses anything else, so a held-out response (or a fact summary built from them) cannot reach a
generation prompt by passing the wrong object. Context is rendered before the question so the
static part of the prompt is a shared prefix across a personality's questions (provider caches).

Each example is flattened to one line (internal whitespace collapsed) so the prompt is
unambiguous to read back: one ``Training example question:`` line, one ``Training example
response:`` line.
"""

from __future__ import annotations

from functools import lru_cache

from typing import Callable, Protocol, Sequence

from pydantic import BaseModel, ConfigDict

from ..errors import ContractParseError
from ..llm.types import Message
from ..llm.wire import remember_prefix
from ._guards import Instructions, echo_reason, format_literals

NAME = "generation"
CONTRACT_VERSION = "1"
PARSER_VERSION = "2"  # 2: an echo of the instructions is invalid (issue 22)

MARKER = "## InterviewSim task: interview response generation"

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "Speak as {personality_id}. Answer the following question as {personality_id} would.\n"
    "Personality ID: {personality_id}\n"
    "Write one plausible interview response to the new question, in the first person, as this "
    "person would answer it. Use the context below when it is given. Return only the text of one "
    "response: no preamble, no labels, no quotation marks around it, no alternative answers."
)

PROFILE_HEADING = "Profile:"
EXAMPLES_HEADING = "Training examples (earlier interviews of this person):"
EXAMPLE_QUESTION = "Training example question: "
EXAMPLE_RESPONSE = "Training example response: "
NO_CONTEXT_LINE = "Context: none."
NEW_QUESTION = "New question: "
FINAL_INSTRUCTION = "Return response text only."

INSTRUCTIONS = Instructions(
    *format_literals(SYSTEM_TEMPLATE), PROFILE_HEADING, EXAMPLES_HEADING, EXAMPLE_QUESTION, EXAMPLE_RESPONSE,
    NO_CONTEXT_LINE, NEW_QUESTION, FINAL_INSTRUCTION,
)
"""The tool's own wording, for the echo rule (``_guards``). The profile, the training examples and the
question are data: a response may repeat a training answer (the offline generator does), but not
the instructions."""


class ExampleLike(Protocol):
    """What a context example must offer (``split.PairRef`` does): a training question and response."""

    @property
    def question(self) -> str: ...

    @property
    def response(self) -> str: ...


class ContextLike(Protocol):
    """The part of ``strategies.GenerationContext`` a prompt needs; typed structurally so this module
    does not depend on the strategies package."""

    @property
    def profile_text(self) -> str | None: ...

    @property
    def examples(self) -> Sequence[ExampleLike]: ...


class Result(BaseModel):
    """One generated response: experimental output, not a verified statement."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    response: str


@lru_cache(maxsize=1 << 14)
def one_line(text: str) -> str:
    """Collapse all whitespace runs to single spaces so one value occupies exactly one prompt line.

    Remembered (a few thousand entries, one personality's training pairs): retrieval contexts show
    the same training pairs to question after question, and the plan renders every one of them."""
    return " ".join(text.split())


def render_context(context: ContextLike | None) -> str:
    """The context block shared by generation and MCQ answering: profile, then examples, or 'none'."""
    parts: list[str] = []
    profile = context.profile_text if context is not None else None
    if profile is not None and profile.strip():
        parts.append(PROFILE_HEADING + "\n" + profile.strip())
    examples = tuple(context.examples) if context is not None else ()
    if examples:
        lines = [EXAMPLES_HEADING]
        for ex in examples:
            lines.append(EXAMPLE_QUESTION + one_line(ex.question))
            lines.append(EXAMPLE_RESPONSE + one_line(ex.response))
        parts.append("\n".join(lines))
    return "\n\n".join(parts) if parts else NO_CONTEXT_LINE


def build_messages(personality_id: str, question: str, context: ContextLike | None) -> list[Message]:
    """Messages for one generation call.

    Args:
        personality_id: the simulated person's id (the paper's ``c``).
        question: the held-out question's *text*; never a pair object, so its response cannot leak.
        context: the strategy's selection (``GenerationContext``) or None for no context.

    Raises:
        TypeError: ``question`` is not a string (e.g. a PairRef was passed).
        ValueError: blank personality_id or question.
    """
    return _builder(personality_id, context, shared=False)(question)


def messages_builder(personality_id: str, context: ContextLike | None) -> Callable[[str], list[Message]]:
    """``build_messages`` for the questions that share one context, the context rendered once.

    A Chrono-m context is the same for every question of a personality, and rendering a
    Chrono-1000 context (~700 KB) took ~5 ms per question (issue 13); the prompts are the same
    bytes as ``build_messages`` gives. The rendered context is also named as a prompt prefix many
    calls share (``llm.wire.remember_prefix``), so each call JSON-escapes only its question. The
    returned function refuses what ``build_messages`` refuses.

    Raises:
        ValueError: blank personality_id (at once); the function raises as ``build_messages``.
    """
    return _builder(personality_id, context, shared=True)


def _builder(personality_id: str, context: ContextLike | None, *, shared: bool) -> Callable[[str], list[Message]]:
    if not personality_id.strip():
        raise ValueError("personality_id must not be blank")
    system = SYSTEM_TEMPLATE.format(personality_id=personality_id)
    head = render_context(context) + "\n\n" + NEW_QUESTION
    if shared:
        remember_prefix(head)  # every prompt of this context starts with it: escape it for JSON once

    def build(question: str) -> list[Message]:
        if not isinstance(question, str):
            raise TypeError(f"question must be the question text (str), got {type(question).__name__}")
        if not question.strip():
            raise ValueError("question must not be blank")
        user = head + one_line(question) + "\n" + FINAL_INSTRUCTION
        return [Message(role="system", content=system), Message(role="user", content=user)]

    return build


def parse(raw: str) -> Result:
    """Any non-blank text that does not repeat the instructions is one response; it is stored stripped.

    Raises:
        ContractParseError: the reply is not text, is blank, or echoes the instructions (a run of
            ``_guards.ECHO_WORDS`` words of the system prompt, as small models do).
    """
    if not isinstance(raw, str):
        raise ContractParseError(NAME, f"reply must be text, got {type(raw).__name__}", str(raw))
    if not raw.strip():
        raise ContractParseError(NAME, "blank response", raw)
    echo = echo_reason(raw, INSTRUCTIONS)
    if echo is not None:
        raise ContractParseError(NAME, echo, raw)
    return Result(response=raw.strip())


# -- output size -----------------------------------------------------------------------------------
MAX_TOKENS = 700
"""Cap on a generated answer: longer than most interview responses, so a cut is rare and marked."""
