"""Wiki-Long's 10,000-character cap (paper section 3) and blank profiles, end to end to the row."""

from __future__ import annotations

import pytest

from _strategy_docs import make_doc, test_questions
from interviewsim_core.contracts import generation
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.generation import plan_generations
from interviewsim_core.schema import PersonalityText
from interviewsim_core.split import split_personality
from interviewsim_core.strategies import LONG_PROFILE_MAX_CHARS, select_contexts
from interviewsim_core.strategies.profiles import cap_text


def _split(profile: str = "Short.", long_profile: str = "Long."):
    doc = make_doc([3, 3, 3, 3, 3])
    return split_personality(doc.model_copy(update={"personality": PersonalityText(profile=profile,
                                                                                   long_profile=long_profile)}))


def _user_text(planned) -> str:
    last = planned.request.messages[-1]
    return last["content"] if isinstance(last, dict) else last.content


def test_the_cap_is_the_papers():
    assert LONG_PROFILE_MAX_CHARS == 10_000


def test_long_profile_over_the_cap_is_cut_and_recorded():
    words = " ".join(f"word{i:05d}" for i in range(3000))  # 29,999 characters
    split = _split(long_profile=words)
    ctx = select_contexts(split, "wiki-long", test_questions(split))[0]
    assert ctx.state == "truncated"
    assert 9_800 <= len(ctx.profile_text) <= 10_000 == LONG_PROFILE_MAX_CHARS
    assert words.startswith(ctx.profile_text) and not ctx.profile_text.endswith(" ")
    assert words[len(ctx.profile_text)] == " "  # cut on a word boundary, not mid-word
    assert ctx.profile_chars == len(ctx.profile_text)

    planned = plan_generations(split, "wiki-long", ModelConfig(model="offline/extractive"))
    row = planned[0].row
    assert (row["context_state"], row["context_chars"]) == ("truncated", len(ctx.profile_text))
    prompt = _user_text(planned[0])
    assert ctx.profile_text in prompt and words[len(ctx.profile_text):].strip().split()[0] not in prompt


def test_long_profile_at_the_cap_is_untouched():
    text = "x" * LONG_PROFILE_MAX_CHARS
    split = _split(long_profile=text)
    ctx = select_contexts(split, "wiki-long", test_questions(split))[0]
    assert (ctx.profile_text, ctx.state, ctx.profile_chars) == (text, "ok", LONG_PROFILE_MAX_CHARS)


def test_the_short_profile_has_no_cap():
    text = "y " * 8_000
    split = _split(profile=text)
    ctx = select_contexts(split, "wiki", test_questions(split))[0]
    assert ctx.profile_text == text and ctx.state == "ok"


def test_cap_text_without_whitespace_cuts_exactly_at_the_cap():
    assert cap_text("a" * 50, 20) == ("a" * 20, True)
    assert cap_text("  padded  ", 6) == ("  padded  ", False)  # the cap counts stripped characters


@pytest.mark.parametrize("method,field", [("wiki-long", "long_profile"), ("wiki", "profile")])
@pytest.mark.parametrize("blank", ["", "   \n\t"])
def test_a_blank_profile_is_reported_not_passed_off_as_no_context(method, field, blank):
    split = _split(**{field: blank})
    ctx = select_contexts(split, method, test_questions(split))[0]
    assert ctx.state == "blank_profile" and ctx.profile_text is None and ctx.profile_chars == 0
    row = plan_generations(split, method, ModelConfig(model="offline/extractive"))[0].row
    assert row["context_state"] == "blank_profile" and row["strategy"] != "no-context"
    simple = plan_generations(split, "simple", ModelConfig(model="offline/extractive"))[0].row
    assert simple["context_state"] == "ok"  # Simple's empty context is by design, not a data problem


def test_the_prompt_of_a_truncated_profile_keeps_the_contract():
    split = _split(long_profile="z " * 20_000)
    planned = plan_generations(split, "wiki-long", ModelConfig(model="offline/extractive"))
    assert generation.PROFILE_HEADING in _user_text(planned[0])
