"""Prompt tokens per planned call, and whether the count is the model's own tokenizer's; the expected
completion tokens of a call (``completion_tokens``: the contract's reply size, the person's answer size).

Counted per line and memoised by the line's text: a personality's context (its profile, its
training examples) repeats line for line in every prompt of a method and across methods, so a
Chrono-1000 prompt of ~700 KB costs a split and dictionary look-ups, not a tokenisation. A line's
count plus one token per line break is within a few tokens per prompt of the whole-text count for
BPE tokenizers, and equal to it for the offline model's whitespace count. The memo is cleared per
personality (``forget``), so it follows one personality's text, not the corpus.
"""

from __future__ import annotations

from collections.abc import Callable

from ..llm.types import CallRequest, ModelConfig

MESSAGE_OVERHEAD = 4
"""Tokens of a message's role and separators (OpenAI's chat format), and of the reply priming."""

LONG = 16_384
"""Characters from which a message's head is remembered (``PromptTokens._text``)."""
TAIL = 4_096
"""Characters at the end of a long message that are not part of its remembered head (where the question is)."""

_OWN_TOKENIZER = ("gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-")


def has_own_tokenizer(model: ModelConfig) -> bool:
    """True when litellm counts with this model's own tokenizer (tiktoken for OpenAI's models at OpenAI).

    Any other model is counted with litellm's default tokenizer, an estimate: a model behind a custom
    ``api_base`` (a local server called ``openai/gemma`` is not OpenAI's), Anthropic, Gemini, ...
    The offline model counts whitespace words, which is exactly what the plan counts for it.
    """
    name = model.model
    if name.startswith("offline/"):
        return True
    if model.api_base is not None:
        return False
    bare = name.split("/", 1)[1] if name.startswith(("openai/", "azure/")) else name
    return ("/" not in bare) and bare.startswith(_OWN_TOKENIZER)


class PromptTokens:
    """Counts prompt tokens of requests, per model, with a per-line memo."""

    def __init__(self) -> None:
        self._memo: dict[str, dict[str, int]] = {}
        self._counters: dict[str, Callable[[str], int]] = {}
        self._heads: dict[tuple[str, int], tuple[str, int]] = {}

    def forget(self) -> None:
        self._memo.clear()
        self._heads.clear()

    def _counter(self, model: str) -> Callable[[str], int]:
        fn = self._counters.get(model)
        if fn is None:
            if model.startswith("offline/"):
                fn = lambda text: len(text.split())  # noqa: E731 - the offline provider's own usage count
            else:
                from ..llm.transport import litellm_module

                litellm = litellm_module()
                fn = lambda text, _m=model: int(litellm.token_counter(model=_m, text=text)) if text else 0  # noqa: E731
            self._counters[model] = fn
        return fn

    def count(self, model: ModelConfig, req: CallRequest) -> int:
        total = MESSAGE_OVERHEAD
        for i, m in enumerate(req.messages):
            total += self._text(model.model, i, m["content"]) + MESSAGE_OVERHEAD
        return total

    def _text(self, model: str, slot: int, text: str) -> int:
        """Tokens of one message. A long message usually starts with the previous one's context (a
        Chrono-m prompt differs from the last one only in its question): its head is compared at
        memcmp speed and its count reused, and only the rest is split into lines.

        A short message for the offline model is split as a whole: its whitespace-word count is what its
        lines' counts add up to (a line break is whitespace), and the split costs less than a memo look-up
        per line would, without filling a memo (a curation's plan counts each transcript's lines once)."""
        if len(text) < LONG:
            return len(text.split()) if model.startswith("offline/") else self._lines(model, text)
        head = self._heads.get((model, slot))
        if head is not None and text.startswith(head[0]):
            return head[1] + self._lines(model, text[len(head[0]):])
        cut = text.rfind("\n", 0, len(text) - TAIL)
        if cut <= 0:
            return self._lines(model, text)
        n = self._lines(model, text[:cut])
        self._heads[(model, slot)] = (text[:cut], n)
        return n + self._lines(model, text[cut:])

    def _lines(self, model: str, text: str) -> int:
        memo = self._memo.setdefault(model, {})
        counter = self._counter(model)
        lines = text.split("\n")
        n = 0 if model.startswith("offline/") else len(lines) - 1  # a line break is a token, not a word
        for line in lines:
            c = memo.get(line)
            if c is None:
                c = memo[line] = counter(line)
            n += c
        return n


EXPECTED_COMPLETION_TOKENS: dict[str, int] = {
    "content_similarity": 90,
    "factual_consistency": 90,
    "personality": 70,
    "fact_summary": 600,
    "atomic_item": 50,
    "mcq_generation": 160,
    "mcq_answering": 8,
    "premise_pass1": 180,
    "premise_pass2": 320,
}
"""Expected reply size per contract, in tokens, from the output shapes seed 000/002 ask for (a JSON
object with a one- or two-sentence explanation; a fact summary of a few hundred words; one label
per MCQ item, ``mcq_answering`` is per item). Generation is not listed: its size is the person's, their
mean training answer (``mean_answer_tokens``)."""


TOKENS_PER_WORD = 1.35
"""English prose in GPT-family tokenizers; used only where no tokenizer applies (answer-size estimates)."""


def mean_answer_tokens(split) -> int:
    """Expected size of a generated answer for one person: their mean *training* answer length.

    Training answers only: the held-out ones are the test set and stay out of everything but the
    judges' prompts, estimates included.
    """
    words = [len(p.response.split()) for p in split.train_pairs]
    return max(1, int(sum(words) / max(1, len(words)) * TOKENS_PER_WORD))


def completion_tokens(req: CallRequest, person_tokens: int) -> int:
    """Expected reply tokens of one call: the contract's size, per item for MCQ, the person's for generation."""
    expected = EXPECTED_COMPLETION_TOKENS.get(req.contract)
    if req.contract == "mcq_answering":
        from ..contracts.mcq_answering import QUESTIONS_OPEN

        block = req.messages[-1]["content"].rpartition(QUESTIONS_OPEN)[2]
        n_items = sum(1 for line in block.splitlines() if line.startswith("Q") and line[1:2].isdigit())
        return max(1, n_items) * (expected or 8)
    if expected is not None:
        return expected
    return max(1, person_tokens)
