"""Issue 22: a placeholder of the template is not content, an echo of the instructions is not an answer,
and every parse error names what was wrong (so a re-ask can say it).

The replies below are the ones a small local model (Gemma 3 270M) gave in the issue's runs, or built
from each contract's own constants, so a template change cannot leave a test asserting on stale text.
"""

from __future__ import annotations

import json

import pytest

from interviewsim_core import offline
from interviewsim_core.contracts import (
    atomic_item,
    content_similarity,
    fact_summary,
    factual_consistency,
    generation,
    mcq_generation,
    personality,
    premise,
)
from interviewsim_core.contracts._guards import ECHO_WORDS, Instructions, placeholder_in
from interviewsim_core.errors import ContractParseError
from interviewsim_core.schema import QAPair
from interviewsim_core.split import PairRef
from interviewsim_core.strategies._base import GenerationContext


def _reason(parse, raw: str, *args) -> str:
    with pytest.raises(ContractParseError) as exc:
        parse(raw, *args)
    return exc.value.reason


# -- placeholders, per contract ---------------------------------------------------------------------


def test_cs_placeholder_explanation_is_invalid_and_the_template_holds_it() -> None:
    assert content_similarity.EXPLANATION_PLACEHOLDER in content_similarity.SYSTEM_TEMPLATE
    raw = json.dumps({"score": 1, "explanation": "<why this score, citing the two responses>"})
    reason = _reason(content_similarity.parse, raw)
    assert "placeholder" in reason and "<why this score" in reason
    # The bare words of the placeholder, or the placeholder inside a sentence, are not content either.
    assert "placeholder" in _reason(content_similarity.parse, json.dumps(
        {"score": 2, "explanation": "  Why this score, citing the two responses. "}))
    assert "placeholder" in _reason(content_similarity.parse, json.dumps(
        {"score": 2, "explanation": "Because <why this score, citing the two responses>"}))
    ok = content_similarity.parse(json.dumps({"score": 4, "explanation": "Both cite the 1962 tour."}))
    assert ok.score == 4


def test_fc_placeholder_explanation_is_invalid() -> None:
    assert factual_consistency.EXPLANATION_PLACEHOLDER in factual_consistency.SYSTEM_TEMPLATE
    raw = json.dumps({"label": "Entailment", "explanation": "<justification from the fact summary>"})
    assert "placeholder" in _reason(factual_consistency.parse, raw)
    # The label's placeholder (the list of labels) is refused as not one label, naming the labels.
    raw = json.dumps({"label": '"Entailment" | "Neutral" | "Contradiction"', "explanation": "x"})
    assert "label must be one of" in _reason(factual_consistency.parse, raw)


@pytest.mark.parametrize("field", ["summary", "explanation"])
def test_fact_summary_placeholders_are_invalid(field: str) -> None:
    values = {"summary": "He toured Europe in 1962.", "explanation": "From responses 1-3."}
    values[field] = {"summary": fact_summary.SUMMARY_PLACEHOLDER,
                     "explanation": fact_summary.EXPLANATION_PLACEHOLDER}[field]
    assert values[field] in fact_summary.SYSTEM_TEMPLATE
    reason = _reason(fact_summary.parse, json.dumps(values))
    assert reason.startswith(f"{field} is the instructions' placeholder")


def test_atomic_item_placeholders_are_invalid() -> None:
    raw = f"Atomic Question: {atomic_item.QUESTION_PLACEHOLDER}\nAtomic Answer: {atomic_item.ANSWER_PLACEHOLDER}"
    assert raw in atomic_item.SYSTEM_TEMPLATE  # the exact lines the template shows
    assert "atomic question is the instructions' placeholder" in _reason(atomic_item.parse, raw)
    raw = "Atomic Question: Where did he tour in 1962?\nAtomic Answer: <the short exact answer>"
    assert "atomic answer is the instructions' placeholder" in _reason(atomic_item.parse, raw)
    assert atomic_item.parse("Atomic Question: Where?\nAtomic Answer: Europe").answer == "Europe"


def _mcq(question: str, texts: list[str]) -> str:
    kinds = mcq_generation.KINDS_BY_COUNT[len(texts)]
    return json.dumps({"question": question, "options": [{"kind": k, "text": t} for k, t in zip(kinds, texts)],
                       "correct_answer": "A"})


def test_mcq_generation_placeholders_are_invalid() -> None:
    system = mcq_generation.build_messages("Where?", "Europe", 3)[0]["content"]
    assert mcq_generation.QUESTION_PLACEHOLDER in system
    assert all(mcq_generation.OPTION_PLACEHOLDERS[k] in system for k in mcq_generation.KINDS_BY_COUNT[3])
    reason = _reason(mcq_generation.parse, _mcq("<the atomic question>", ["Europe", "Not Europe", "Asia"]),
                     "Where?", "Europe", 3)
    assert "question is the instructions' placeholder" in reason
    reason = _reason(mcq_generation.parse, _mcq("Where?", ["Europe", "Not Europe", "<near_miss option>"]),
                     "Where?", "Europe", 3)
    assert "options[2].text is the instructions' placeholder '<near_miss option>'" in reason


def test_ps_placeholders_are_invalid_and_named() -> None:
    assert personality.JUSTIFICATION_PLACEHOLDER in personality.build_messages("openness", ["x"])[0]["content"]
    raw = f"<rate>High</rate> <justification>{personality.JUSTIFICATION_PLACEHOLDER}</justification>"
    assert "justification is the instructions' placeholder" in _reason(personality.parse, raw)
    raw = "<rate>LEVEL</rate> <justification>He likes new things.</justification>"
    assert "placeholder" in _reason(personality.parse, raw)


def test_premise_placeholders_are_read_from_the_seed_template() -> None:
    assert "…" in premise.PASS1_PLACEHOLDERS and "… or NONE" in premise.PASS1_PLACEHOLDERS
    assert "brief pointer into the window" in premise.PASS2_PLACEHOLDERS
    blind = {"subject": "…", "predicate_and_force": "…", "object_or_content": "…", "time": "…", "scope": "…",
             "unknown_slots": ["…"], "licensed_inference": "… or NONE", "decontextuality_score": 0.0,
             "labels": ["…"], "bundled": False, "notes": "one or two sentences, only if something needs explaining"}
    assert "subject is the instructions' placeholder '…'" in _reason(premise.parse_pass1, json.dumps(blind))
    real = {**blind, "subject": "Bob", "predicate_and_force": "is retiring", "object_or_content": "his role",
            "time": "November 2026", "scope": "N/A", "unknown_slots": [], "licensed_inference": "NONE",
            "labels": [], "notes": ""}
    assert premise.parse_pass1(json.dumps(real)).subject == "Bob"
    assert "labels[0] is the instructions' placeholder" in _reason(premise.parse_pass1,
                                                                   json.dumps({**real, "labels": ["…"]}))


def test_a_placeholder_word_inside_real_text_is_content() -> None:
    # Only a bracketed placeholder counts when it is merely contained: an ellipsis in a sentence is text.
    assert placeholder_in("He paused… then answered.", premise.PASS1_PLACEHOLDERS) is None
    assert placeholder_in("level", ("LEVEL",)) == "LEVEL"


# -- echoes ---------------------------------------------------------------------------------------


def _ctx(*pairs: tuple[str, str]) -> GenerationContext:
    refs = tuple(PairRef(QAPair(qa_id=f"qa{i}", question=q, response=r), "itv1", 1, i, i)
                 for i, (q, r) in enumerate(pairs))
    return GenerationContext(profile_text=None, examples=refs, n_requested=len(refs), n_used=len(refs),
                             strategy="test")


TRAINING_ANSWER = ("I grew up on a farm outside Lyon and I still get up before dawn, because the cows never "
                   "cared whether it was Sunday and neither, it turns out, do I.")


def test_a_generation_that_begins_with_the_system_prompt_is_an_echo() -> None:
    system = generation.build_messages("P3", "When do you get up?", None)[0]["content"]
    reason = _reason(generation.parse, system + "\nI get up early.")
    assert "repeats the instructions" in reason
    # The shape: the system prompt's body (personality filled in) then an answer.
    assert "repeats the instructions" in _reason(generation.parse, system.split("\n", 1)[1] + " I get up early.")


def test_the_offline_generation_echoes_a_training_answer_and_stays_valid() -> None:
    """The offline model answers with the closest training response, verbatim: that is context, not
    instructions, so it must parse (the demo's generations are exactly this)."""
    messages = generation.build_messages("P3", "When do you get up in the morning?",
                                         _ctx(("When do you get up?", TRAINING_ANSWER), ("Pets?", "A dog.")))
    raw = offline.respond(messages, generation.NAME)
    assert raw == TRAINING_ANSWER  # the case under test: a verbatim copy of a part of the prompt
    assert raw in messages[1]["content"]
    assert generation.parse(raw).response == TRAINING_ANSWER


def test_a_response_may_quote_short_pieces_of_the_instructions() -> None:
    words = generation.format_literals(generation.SYSTEM_TEMPLATE)[-1].split()
    short = " ".join(words[: ECHO_WORDS - 1])
    assert generation.parse(f"Well, {short} is what you asked, and I answer: no.").response
    assert "repeats the instructions" in _reason(generation.parse, " ".join(words[: ECHO_WORDS]))


def test_an_echo_is_matched_across_case_punctuation_and_line_breaks() -> None:
    text = content_similarity.SYSTEM_TEMPLATE.upper().replace(" ", "\n  ").replace(",", "")
    assert Instructions(content_similarity.SYSTEM_TEMPLATE).echoed(text) is not None


@pytest.mark.parametrize(
    "parse,system,args",
    [
        (content_similarity.parse, content_similarity.SYSTEM_TEMPLATE, ()),
        (factual_consistency.parse, factual_consistency.SYSTEM_TEMPLATE, ()),
        (fact_summary.parse, fact_summary.SYSTEM_TEMPLATE, ()),
        (atomic_item.parse, atomic_item.SYSTEM_TEMPLATE, ()),
        (personality.parse, personality.build_messages("openness", ["x"])[0]["content"], ()),
        (mcq_generation.parse, mcq_generation.build_messages("Where?", "Europe", 3)[0]["content"],
         ("Where?", "Europe", 3)),
        (premise.parse_pass1, premise.build_pass1_messages("Bob is retiring.")[0]["content"], ()),
        (premise.parse_pass2, premise.build_pass2_messages("Bob is retiring.", "{}", "bob", [])[0]["content"], ()),
    ],
    ids=["cs", "fc", "fact_summary", "atomic_item", "ps", "mcq_generation", "premise1", "premise2"],
)
def test_every_contract_names_a_copied_prompt(parse, system, args) -> None:
    assert "repeats the instructions" in _reason(parse, system, *args)


def test_an_echo_inside_a_json_field_is_invalid() -> None:
    sentence = "You compare a candidate interview response with the reference response the person actually gave."
    raw = json.dumps({"score": 3, "explanation": sentence})
    assert "repeats the instructions" in _reason(content_similarity.parse, raw)


# -- the offline model's outputs stay valid ----------------------------------------------------------


def test_offline_outputs_of_every_contract_parse() -> None:
    responses = [TRAINING_ANSWER, "I sold paint in Lyon in 1950 and I have painted every morning since."]
    cases = [
        (content_similarity, content_similarity.build_messages(responses[0], responses[1]), ()),
        (fact_summary, fact_summary.build_messages("P3", responses), ()),
        (factual_consistency, factual_consistency.build_messages(responses[1], responses[0]), ()),
        (atomic_item, atomic_item.build_messages("When do you get up?", TRAINING_ANSWER), ()),
        (personality, personality.build_messages("openness", responses), ()),
    ]
    for contract, messages, args in cases:
        contract.parse(offline.respond(messages, contract.NAME), *args)
    item = atomic_item.parse(offline.respond(cases[3][1], atomic_item.NAME))
    for n in (3, 4):
        msgs = mcq_generation.build_messages(item.question, item.answer, n)
        mcq_generation.parse(offline.respond(msgs, mcq_generation.NAME), item.question, item.answer, n)
    p1 = premise.parse_pass1(offline.respond(premise.build_pass1_messages(item.question), premise.PASS1_NAME))
    window = [premise.WindowMessage(speaker="P3", time="1962", text=TRAINING_ANSWER)]
    premise.parse_pass2(offline.respond(premise.build_pass2_messages(item.question, p1.to_json(), "P3", window),
                                        premise.PASS2_NAME))


# -- every PS breach is named ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("<rate>high</rate> <justification>x</justification>", "write it exactly as 'High'"),
        ("<rate> High</rate> <justification>x</justification>", "no spaces inside the tag"),
        ("<rate>High</rate> <justification>x</justifcation>", "unknown tag(s) ['</justifcation>']"),
        ("<rate>High</rate> <justification>x", "missing </justification>"),
        ("High. He is curious.", "missing <rate> and </rate> and <justification> and </justification>"),
        ("<rate>High</rate> <justification>a</justification> <rate>Low</rate> <justification>b</justification>",
         "more than once"),
        ("<justification>x</justification> <rate>High</rate>", "tags out of order"),
        ("Sure! <rate>High</rate> <justification>x</justification>", "text before <rate>: 'Sure!'"),
        ("<rate>High</rate> because <justification>x</justification>", "text between </rate> and <justification>"),
        ("<rate>High</rate> <justification>x</justification> Thanks", "text after </justification>: 'Thanks'"),
    ],
)
def test_ps_parse_errors_name_the_breach(raw: str, expected: str) -> None:
    assert expected in _reason(personality.parse, raw)


def test_atomic_item_line_count_error_says_which_lines_were_seen() -> None:
    reason = _reason(atomic_item.parse, "Here you go:\nAtomic Question: Where?\nAtomic Answer: Europe")
    assert "got 3" in reason and "line 2 starts with 'Atomic Question:'" in reason
