"""The curation plan's shortcuts (issue 31, planning at scale) change no figure: the plan still counts the
calls and prompt tokens an offline curation sends (each offline answer written as JSON and parsed back by
the contract's parser), the offline QA-structuring typed result is what its parser makes of its text, and
the QA rule's filler and repeat patterns remove what their plain definitions remove."""

from __future__ import annotations

import re
from collections import Counter

from interviewsim_core.contracts import qa_structuring
from interviewsim_core.curation.plan import plan_curation
from interviewsim_core.curation.run import STEPS, curate
from interviewsim_core.curation.sample_transcripts import write_sample_transcripts
from interviewsim_core.curation.structuring import _FILLER, _REPEAT, normalise
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.offline import respond, respond_result
from interviewsim_core.offline.qa_structuring import answer, result
from interviewsim_core.planning.tokens import PromptTokens

from curation_fixtures import OfflineRunner

OFFLINE = ModelConfig(model="offline/extractive")
_STEP_OF = {contract: step for step, contract in STEPS.items()}


class _CountingRunner(OfflineRunner):
    """The offline answers through JSON and each request's parser, counting calls and prompt tokens per step,
    and keeping the requests the offline model answers with a typed result (QA structuring, thematic tagging)."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = PromptTokens()
        self.by_step: Counter[str] = Counter()
        self.prompt: Counter[str] = Counter()
        self.typed_requests: list = []

    def run_many(self, pairs):
        for model, req in pairs:
            step = _STEP_OF[req.contract]
            self.by_step[step] += 1
            self.prompt[step] += self.tokens.count(model, req)
            if req.contract in (qa_structuring.NAME, "thematic_tagging"):
                self.typed_requests.append(req)
        return super().run_many(pairs)


def test_the_plan_counts_what_an_offline_curation_of_the_sample_sends(tmp_path) -> None:
    manifest = write_sample_transcripts(tmp_path / "tx")
    planned = plan_curation(tmp_path / "tx", manifest, OFFLINE, None)
    sent = _CountingRunner()
    made = curate(tmp_path / "tx", manifest, sent, OFFLINE)
    assert made.problems == [] and made.refused == {}
    assert {line.step: line.calls for line in planned.lines} == dict(sent.by_step)
    assert {line.step: line.prompt_tokens for line in planned.lines} == dict(sent.prompt)
    assert set(sent.by_step) == set(STEPS)  # every step planned: QA structuring and tagging from the typed answers

    # the typed offline results are exactly what the bound parsers make of the offline texts
    assert {req.contract for req in sent.typed_requests} == {qa_structuring.NAME, "thematic_tagging"}
    for req in sent.typed_requests:
        messages = [dict(m) for m in req.messages]
        assert respond_result(messages, req.contract) == req.parser(respond(messages, req.contract))


def test_the_typed_qa_result_round_trips_through_its_text() -> None:
    turns = [("interviewer", "Q", "Uh, what did you build first, and why?"), ("person", "A", "A boat, um, a small one."),
             ("person", "A", "My my father helped."), ("interviewer", "Q", "Thanks."), ("person", "A", "Thank you too.")]
    prompt = "\n\n".join(m["content"] for m in qa_structuring.build_messages("A", turns))
    typed = result(prompt)
    assert typed == qa_structuring.parse(answer(prompt), turns)
    assert [(p.question_turn, p.response_turns) for p in typed.pairs] == [(0, (1, 2))]
    assert respond_result([{"role": "user", "content": "x"}], "transcript_quality") is None  # no typed path: text


_PLAIN_FILLER = re.compile(r"(?i)(?<![\w'])(?:uh+|um+|erm|er|ah)(?![\w'])[,.]?\s*")
"""The filler rule as first written (case-insensitive, a look-behind at every position): the oracle."""


def test_the_filler_pattern_removes_what_the_plain_definition_removes() -> None:
    words = ["uh", "Uhh", "UM", "umm", "er", "Erm", "ERM", "ah", "AH", "ahh", "her", "hum", "uhm", "err", "ear",
             "x'uh", "uh'", "_uh", "9um", "é", "ümm", "\u017f", "\u212a", "a", "u", "e", "I"]
    seps = ["", " ", ", ", ". ", "'", "-", "\n", "  "]
    samples = [a + s + b for a in words for s in seps for b in words]
    samples += [chr(c) + w for c in range(0x250) for w in ("uh", "erm", "ah")]
    assert [_FILLER.sub("", s) for s in samples] == [_PLAIN_FILLER.sub("", s) for s in samples]
    assert normalise("Uh, I I think, um, the er boat was ERM fine. Her answer, ah.") == \
        "I think, the boat was fine. Her answer,"


_PLAIN_REPEAT = re.compile(r"(?i)\b(i|a|the|and|we|you|it|to|of|in|is|but|so)(?:[\s,]+\1\b)+")
"""The repeated-word rule as first written: the oracle."""


def test_the_repeat_pattern_removes_what_the_plain_definition_removes() -> None:
    words = ["i", "I", "\u0130", "\u0131", "a", "A", "an", "and", "AND", "ands", "the", "The", "thE", "theory", "to", "To",
             "we", "you", "YOU", "it", "It", "its", "it's", "isn't", "of", "in", "inn", "is", "IS", "but", "so", "\u017fo",
             "x", "ia", "th"]
    seps = [" ", ", ", ",", "  ", "\n", " ,", "", "-", "'", "."]
    samples = [a + s + b for a in words for s in seps for b in words]
    samples += [a + s + b + s + c for a in words[:18] for s in seps[:5] for b in words[:18] for c in words[:18]]
    samples += [chr(c) + "the the" for c in range(0x250)] + ["the" + chr(c) + "the" for c in range(0x250)]

    def once(pattern, text):
        return pattern.sub(lambda m: m.group(1), text)

    assert [once(_REPEAT, s) for s in samples] == [once(_PLAIN_REPEAT, s) for s in samples]
    assert once(_REPEAT, "And and I i think the the theory is is, is fine") == "And I think the theory is fine"


def test_a_short_offline_message_counts_what_its_lines_count() -> None:
    """The short-message path (the whole text split at once) counts what the per-line path counts."""
    tokens = PromptTokens()
    texts = ["", "one", "a b\nc", "\n\n a \n", "tab\there\r\nand\u2028sep\u00a0nbsp \x1c x", "Turns (3):\n[0] person (A): hi  there\n"]
    assert [tokens._text(OFFLINE.model, 0, t) for t in texts] == [tokens._lines(OFFLINE.model, t) for t in texts] \
        == [0, 1, 3, 1, 6, 7]


def _plain_normalise(text: str) -> str:
    """``normalise`` as first written (a regex for the space before a mark, then the collapse): the oracle."""
    text = _FILLER.sub("", text)
    text = _REPEAT.sub(lambda m: m.group(1), text)
    text = re.sub(r"\s+([,.?!])", r"\1", text)
    return " ".join(text.split())


def test_normalise_gives_what_the_plain_definition_gives() -> None:
    import itertools

    parts = ["a", "uh", "I", "i", "the", ",", ".", "?", "!", " ", "  ", "\n", "\t", "\u00a0", "\u2028", ";", "x."]
    samples = ["".join(p) for n in range(1, 5) for p in itertools.product(parts, repeat=n)]
    assert sum(_plain_normalise(s) != " ".join(s.split()) for s in samples) > 1000  # the marks' rule is exercised
    assert [normalise(s) for s in samples] == [_plain_normalise(s) for s in samples]


def test_the_plan_pauses_the_cyclic_collector_and_restores_it(tmp_path, monkeypatch) -> None:
    import gc

    from interviewsim_core.curation import plan as plan_module
    from interviewsim_core.curation.plan import collector_paused

    manifest = write_sample_transcripts(tmp_path / "tx")
    seen: list[bool] = []
    real = plan_module.curate_with

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(plan_module, "curate_with", spy)
    was_on = gc.isenabled()
    try:
        gc.enable()
        plan_curation(tmp_path / "tx", manifest, OFFLINE, None)
        assert seen == [False] and gc.isenabled()
        with collector_paused():  # nested: on again only when the outer one ends
            with collector_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()  # off before: stays off
        plan_curation(tmp_path / "tx", manifest, OFFLINE, None)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        (gc.enable if was_on else gc.disable)()
