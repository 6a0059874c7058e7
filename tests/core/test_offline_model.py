"""The offline model: every contract answered in a valid shape, from the prompt alone, deterministically.

Prompts are built with the real contract builders, from small inline fixtures and from the
shipped sample corpus, and every answer must pass that contract's strict parser.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interviewsim_core.contracts import (
    atomic_item,
    content_similarity,
    fact_summary,
    factual_consistency,
    generation,
    mcq_answering,
    mcq_generation,
    personality,
    premise,
)
from interviewsim_core.errors import ContractParseError
from interviewsim_core.offline import UnrecognisedPromptError, prompt_text, respond, responders
from interviewsim_core.loader import load_corpus
from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR
from interviewsim_core.split import split_personality
from interviewsim_core.strategies import select_contexts


@dataclass(frozen=True)
class Pair:
    question: str
    response: str


@dataclass(frozen=True)
class Ctx:
    profile_text: str | None
    examples: tuple


EXAMPLES = (
    Pair("Where did you grow up?", "I grew up in Lyon, by the river."),
    Pair("What was your first job?", "I sold paint in my uncle's shop for three years."),
    Pair("Do you like crowds?", "No, I prefer a quiet evening at home."),
)


def _item(n: int = 3) -> mcq_generation.ShuffledItem:
    raw = respond(mcq_generation.build_messages("What was the person's first job?", "Selling paint for three years", n), mcq_generation.NAME)
    return mcq_generation.shuffle_item(mcq_generation.parse(raw, "What was the person's first job?", "Selling paint for three years", n), "s")


# --- every contract: the answer to a built prompt parses ------------------------------------------

def test_every_contract_answer_parses() -> None:
    cases = [
        (generation.build_messages("P1", "Where did you grow up as a child?", Ctx(None, EXAMPLES)), generation.NAME, generation.parse),
        (generation.build_messages("P1", "Where were you born?", Ctx("Born in Lyon in 1931. A painter.", ())), generation.NAME, generation.parse),
        (generation.build_messages("P1", "Anything?", None), generation.NAME, generation.parse),
        (content_similarity.build_messages("I grew up in Lyon.", "I was raised in Lyon."), content_similarity.NAME, content_similarity.parse),
        (fact_summary.build_messages("P1", [p.response for p in EXAMPLES]), fact_summary.NAME, fact_summary.parse),
        (factual_consistency.build_messages("I grew up in Lyon.", "I grew up in Paris."), factual_consistency.NAME, factual_consistency.parse),
        (personality.build_messages("extraversion", [p.response for p in EXAMPLES]), personality.NAME, personality.parse),
        (atomic_item.build_messages(EXAMPLES[1].question, EXAMPLES[1].response), atomic_item.NAME, atomic_item.parse),
        (mcq_answering.build_messages("P1", Ctx(None, EXAMPLES), [_item(3), _item(3)]), mcq_answering.NAME,
         lambda raw: mcq_answering.parse(raw, [("A", "B", "C")] * 2)),
        (premise.build_pass1_messages("P1 said in 1972 that she sold paint in Lyon."), premise.PASS1_NAME, premise.parse_pass1),
    ]
    for messages, name, parse in cases:
        parse(respond(messages, name))


@pytest.mark.parametrize("n", [3, 4])
def test_mcq_generation_answer_parses(n: int) -> None:
    q, a = "How long did the person sell paint?", "For three years"
    r = mcq_generation.parse(respond(mcq_generation.build_messages(q, a, n), mcq_generation.NAME), q, a, n)
    assert len(r.options) == n and r.options[0].text == a


line = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40).filter(
    lambda s: s.strip() != ""
)


@settings(max_examples=60, deadline=None)
@given(q=line, a=line, n=st.sampled_from([3, 4]))
def test_property_mcq_generation_answer_always_parses(q: str, a: str, n: int) -> None:
    mcq_generation.parse(respond(mcq_generation.build_messages(q, a, n), mcq_generation.NAME), q, a, n)


@settings(max_examples=40, deadline=None)
@given(question=line, response=st.text(min_size=1, max_size=120).filter(lambda s: s.strip() != ""))
def test_property_atomic_item_answer_always_parses_and_feeds_mcq(question: str, response: str) -> None:
    item = atomic_item.parse(respond(atomic_item.build_messages(question, response), atomic_item.NAME))
    mcq_generation.parse(respond(mcq_generation.build_messages(item.question, item.answer, 4), mcq_generation.NAME), item.question, item.answer, 4)


@settings(max_examples=40, deadline=None)
@given(responses=st.lists(st.text(min_size=1, max_size=80).filter(lambda s: s.strip() != ""), min_size=1, max_size=5),
       trait=st.sampled_from(personality.TRAITS))
def test_property_collection_contracts_always_parse(responses: list[str], trait: str) -> None:
    fact_summary.parse(respond(fact_summary.build_messages("P", responses), fact_summary.NAME))
    personality.parse(respond(personality.build_messages(trait, responses), personality.NAME))
    content_similarity.parse(respond(content_similarity.build_messages(responses[0], responses[-1]), content_similarity.NAME))
    factual_consistency.parse(respond(factual_consistency.build_messages(responses[0], responses[-1]), factual_consistency.NAME))
    generation.parse(respond(generation.build_messages("P", "Why?", Ctx(None, tuple(Pair("Why?", r) for r in responses))), generation.NAME))


# --- the sample corpus: real prompts, every contract --------------------------------------------

def test_sample_corpus_prompts_are_all_answered_validly() -> None:
    doc = load_corpus(SAMPLE_CORPUS_DIR)[0]
    split = split_personality(doc)
    tests = split.test_pairs[:3]
    questions = [(p.qa_id, p.question) for p in tests]
    for method in ("simple", "wiki", "chrono-100"):
        for p, ctx in zip(tests, select_contexts(split, method, questions)):
            out = generation.parse(respond(generation.build_messages(doc.personality_id, p.question, ctx), generation.NAME))
            cs = content_similarity.parse(respond(content_similarity.build_messages(p.response, out.response), content_similarity.NAME))
            assert 1 <= cs.score <= 5
    responses = [p.response for p in split.test_pairs]
    summary = fact_summary.parse(respond(fact_summary.build_messages(doc.personality_id, responses), fact_summary.NAME))
    for p in tests:
        factual_consistency.parse(respond(factual_consistency.build_messages(summary.summary, p.response), factual_consistency.NAME))
    levels = {t: personality.parse(respond(personality.build_messages(t, responses), personality.NAME)).rate for t in personality.TRAITS}
    assert 0.0 <= personality.alignment(levels, levels) == 1.0
    items = []
    for i, p in enumerate(tests):
        atom = atomic_item.parse(respond(atomic_item.build_messages(p.question, p.response), atomic_item.NAME))
        for n in (3, 4):
            gen = mcq_generation.parse(respond(mcq_generation.build_messages(atom.question, atom.answer, n), mcq_generation.NAME), atom.question, atom.answer, n)
            items.append(mcq_generation.shuffle_item(gen, f"0:{p.qa_id}#{n}"))
    ctx = select_contexts(split, "chrono-100", questions[:1])[0]
    answers = mcq_answering.parse(respond(mcq_answering.build_messages(doc.personality_id, ctx, items), mcq_answering.NAME),
                                  mcq_answering.label_sets_of(items))
    assert len(answers.answers) == len(items)


# --- behaviour of the baseline ----------------------------------------------------------------

def test_generation_picks_the_best_overlapping_example() -> None:
    out = respond(generation.build_messages("P1", "And your first job, what was it?", Ctx(None, EXAMPLES)), generation.NAME)
    assert out == EXAMPLES[1].response


def test_generation_uses_a_profile_sentence_then_a_fallback() -> None:
    profile = "A painter from Lyon. Born in 1931 in a small village. Married twice."
    out = respond(generation.build_messages("P1", "When were you born?", Ctx(profile, ())), generation.NAME)
    assert out == "Born in 1931 in a small village."
    fallback = respond(generation.build_messages("P1", "When were you born?", None), generation.NAME)
    assert fallback and fallback not in profile


@pytest.mark.parametrize(
    "ref, cand, expected",
    [
        ("I grew up in Lyon by the river.", "I grew up in Lyon by the river.", 5),
        ("I grew up in Lyon by the river.", "Bananas are yellow fruit.", 1),
    ],
)
def test_content_similarity_bins_lexical_overlap(ref: str, cand: str, expected: int) -> None:
    assert content_similarity.parse(respond(content_similarity.build_messages(ref, cand), content_similarity.NAME)).score == expected


def _cs(ref: str, cand: str) -> int:
    return content_similarity.parse(respond(content_similarity.build_messages(ref, cand), content_similarity.NAME)).score


def test_content_similarity_grows_with_shared_content_and_uses_the_middle_scores() -> None:
    ref = ("We lost the harvest in the flood of 1968, rebuilt the barn with my brother, and sold the "
           "dairy herd to pay the bank before winter.")
    candidates = [  # 0, 1, 2, 3 and 10 shared content words
        "Bananas are yellow fruit grown far away.",
        "The flood was hard on everyone in the valley that spring and summer, and the roads were closed.",
        "The flood and the bank made that a hard year for everyone living in the valley, even the schools and shops.",
        "The flood took the harvest and the bank came calling while everyone in the valley watched the rain.",
        "The flood took our harvest; my brother and I rebuilt the barn and sold the herd to pay the bank.",
        ref,
    ]
    scores = [_cs(ref, c) for c in candidates]
    assert scores == sorted(scores) and scores[0] == 1 and scores[-1] == 5
    assert scores[1:4] == [2, 3, 4]  # not the all-or-nothing bins that scored every different text 1


def test_content_similarity_stems_inflections() -> None:
    assert _cs("My farms and orchards.", "I farmed an orchard.") >= 4


@pytest.mark.parametrize(
    "summary, answer, label",
    [
        ("She grew up in Lyon. She sold paint for three years.", "I grew up in Lyon.", "Entailment"),
        ("She grew up in Lyon. She sold paint for three years.", "I never sold paint.", "Contradiction"),
        ("She grew up in Lyon.", "Horses run fast in summer.", "Neutral"),
    ],
)
def test_factual_consistency_rules(summary: str, answer: str, label: str) -> None:
    assert factual_consistency.parse(respond(factual_consistency.build_messages(summary, answer), factual_consistency.NAME)).label == label


def test_fact_summary_is_extractive_round_robin_and_deduplicated() -> None:
    r = fact_summary.parse(respond(fact_summary.build_messages("P", ["I paint. Every day.", "I paint. Still.", "Lyon is home."]), fact_summary.NAME))
    assert r.summary == "I paint. Lyon is home. Every day. Still."


def test_fact_summary_respects_its_word_cap_leads_first() -> None:
    from interviewsim_core.offline.fact_summary import extract

    responses = [f"Lead {i} sentence here. Detail {i} follows after." for i in range(10)]
    kept = extract(responses, max_words=50)
    assert kept[:10] == [f"Lead {i} sentence here." for i in range(10)]
    assert sum(len(k.split()) for k in kept) <= 50 and len(kept) < 20
    assert extract(["One very long sentence " * 30], max_words=5)  # never empty when there is text


def test_personality_reads_the_lexicon() -> None:
    social = ["I love people and parties with friends.", "Talking to a crowd gives me energy, it is fun."]
    quiet = ["I stay home alone, in quiet.", "I am shy and private; solitude suits me."]
    assert personality.parse(respond(personality.build_messages("extraversion", social), personality.NAME)).rate == "High"
    assert personality.parse(respond(personality.build_messages("extraversion", quiet), personality.NAME)).rate == "Low"
    assert personality.parse(respond(personality.build_messages("openness", ["Yes."]), personality.NAME)).rate == "Neutral"


def test_mcq_answering_follows_context_overlap() -> None:
    item = mcq_generation.ShuffledItem(question="Where did you grow up?", labels=("A", "B", "C"),
                                       texts=("Marseille harbour", "Lyon river", "Nowhere special"),
                                       kinds=("near_miss", "correct", "opposite_negation"), correct_label="B")
    assert respond(mcq_answering.build_messages("P", Ctx(None, EXAMPLES), [item]), mcq_answering.NAME) == "Q1: B"


def _shuffled(question: str, answer: str, n: int, seed: str) -> mcq_generation.ShuffledItem:
    raw = respond(mcq_generation.build_messages(question, answer, n), mcq_generation.NAME)
    return mcq_generation.shuffle_item(mcq_generation.parse(raw, question, answer, n), seed)


def _chosen_kind(item: mcq_generation.ShuffledItem, ctx: Ctx | None) -> str:
    label = respond(mcq_answering.build_messages("P", ctx, [item]), mcq_answering.NAME).split(": ")[1]
    return item.kinds[item.labels.index(label)]


def test_mcq_answering_rejects_an_unsupported_negation_and_follows_a_supported_one() -> None:
    affirmative = _shuffled("Did you sell paint?", "I sold paint in my uncle's shop.", 3, "s1")
    assert _chosen_kind(affirmative, Ctx(None, EXAMPLES)) == "correct"
    negative = _shuffled("Do you like crowds?", "I do not like crowds at all.", 3, "s2")
    ctx = Ctx(None, (Pair("Crowds?", "I do not like crowds, never have."),))
    assert _chosen_kind(negative, ctx) == "correct"


def test_mcq_answering_prefers_the_detail_the_context_supports_over_a_near_miss() -> None:
    item = _shuffled("Where did you grow up?", "In Lyon, by the river.", 4, "s3")
    assert dict(zip(item.kinds, item.texts))["near_miss"] != "In Lyon, by the river."
    assert _chosen_kind(item, Ctx(None, EXAMPLES)) == "correct"


def test_near_miss_changes_one_detail_and_never_only_adds_words() -> None:
    from interviewsim_core.offline._text import content_stems
    from interviewsim_core.offline.mcq_generation import near_miss

    for text in ("Thirty-four, this autumn.", "2380, in 2008.", "Every Monday, the dashboard.", "Water.",
                 "I cringe at that younger me.", "We moved everything online, which I dreaded."):
        miss = near_miss(text)
        assert miss != text and not content_stems(text) < content_stems(miss)


def _sample_items() -> tuple[list, list]:
    doc = load_corpus(SAMPLE_CORPUS_DIR)[0]
    split = split_personality(doc)
    items, sources = [], []
    for p in split.test_pairs:
        atom = atomic_item.parse(respond(atomic_item.build_messages(p.question, p.response), atomic_item.NAME))
        for n in (3, 4):
            gen = mcq_generation.parse(respond(mcq_generation.build_messages(atom.question, atom.answer, n), mcq_generation.NAME),
                                       atom.question, atom.answer, n)
            items.append(mcq_generation.shuffle_item(gen, f"0:{p.qa_id}#{n}"))
            sources.append(p)
    return items, sources


def test_mcq_answering_without_context_is_not_biased_to_a_role() -> None:
    items, _ = _sample_items()
    answers = mcq_answering.parse(respond(mcq_answering.build_messages("P", None, items), mcq_answering.NAME),
                                  mcq_answering.label_sets_of(items)).answers
    kinds = [it.kinds[it.labels.index(a)] for it, a in zip(items, answers)]
    share = {k: kinds.count(k) / len(kinds) for k in set(kinds)}
    assert len(share) >= 3 and max(share.values()) < 0.5, share
    assert len(set(answers)) >= 3  # not always the same position either


def test_mcq_answering_is_well_above_chance_when_the_context_holds_the_source() -> None:
    items, sources = _sample_items()
    ctx = Ctx(None, tuple(Pair(p.question, p.response) for p in sources[::2]))
    answers = mcq_answering.parse(respond(mcq_answering.build_messages("P", ctx, items), mcq_answering.NAME),
                                  mcq_answering.label_sets_of(items)).answers
    accuracy = sum(a == it.correct_label for it, a in zip(items, answers)) / len(items)
    assert accuracy >= 0.6, accuracy


def test_offline_generated_items_stay_valid_and_distinct_on_the_sample() -> None:
    items, _ = _sample_items()
    for it in items:
        assert len({mcq_generation.option_key(t) for t in it.texts}) == len(it.texts)


def test_factual_consistency_ignores_an_unrelated_negated_clause() -> None:
    summary = "Fourteen lorries, one harvest. She runs the cooperative."
    answer = "The cooperative has fourteen lorries and one harvest. No contract, just a handshake."
    assert factual_consistency.parse(respond(factual_consistency.build_messages(summary, answer), factual_consistency.NAME)).label != "Contradiction"


def test_generation_fallback_carries_no_personality_cue() -> None:
    from interviewsim_core.offline.generation import FALLBACK

    for trait in personality.TRAITS:
        assert personality.parse(respond(personality.build_messages(trait, [FALLBACK] * 200), personality.NAME)).rate == "Neutral"


# --- dispatch -----------------------------------------------------------------------------------

def test_every_contract_module_has_a_responder() -> None:
    from interviewsim_core.contracts import REGISTRY

    assert set(responders()) == set(REGISTRY)


def test_unknown_contract_is_refused() -> None:
    with pytest.raises(UnrecognisedPromptError):
        respond([{"role": "user", "content": "Tell me a joke."}], "jokes")


def test_dispatch_follows_the_contract_name_not_the_prompt_text() -> None:
    # A CS prompt asked under the atomic-item contract gets an atomic-item answer: the offline
    # model never reads the prompt to decide which contract it is answering.
    msgs = content_similarity.build_messages("I grew up in Lyon.", "I was raised in Lyon.")
    with pytest.raises(ContractParseError):
        content_similarity.parse(respond(msgs, atomic_item.NAME))
    assert content_similarity.parse(respond(msgs, content_similarity.NAME)).score >= 1


def test_answers_are_deterministic_and_ignore_reask_turns() -> None:
    msgs = content_similarity.build_messages("I grew up in Lyon.", "I was raised in Lyon.")
    first = respond(msgs, content_similarity.NAME)
    reask = msgs + [{"role": "assistant", "content": "<reference>\nbananas\n</reference>"},
                    {"role": "user", "content": "Your reply broke the contract; answer again."}]
    assert respond(reask, content_similarity.NAME) == first == respond(list(msgs), content_similarity.NAME)
    assert prompt_text(reask) == prompt_text(msgs)


def test_quoted_marker_in_content_does_not_hijack_dispatch() -> None:
    msgs = content_similarity.build_messages(atomic_item.MARKER + " quoted", "plain words")
    json.loads(respond(msgs, content_similarity.NAME))  # answered as CS (JSON), not as an atomic item


def test_content_parts_shape_is_read() -> None:
    msgs = content_similarity.build_messages("I grew up in Lyon.", "I grew up in Lyon.")
    parts = [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]} for m in msgs]
    assert respond(parts, content_similarity.NAME) == respond(msgs, content_similarity.NAME)


def test_mcq_answering_reads_a_multi_paragraph_profile() -> None:
    item = mcq_generation.ShuffledItem(question="Where did you grow up?", labels=("A", "B", "C"),
                                       texts=("Marseille harbour", "Nowhere special", "Lyon river"),
                                       kinds=("near_miss", "opposite_negation", "correct"), correct_label="C")
    ctx = Ctx("A painter.\n\nShe grew up by the Lyon river.", ())
    assert respond(mcq_answering.build_messages("P", ctx, [item]), mcq_answering.NAME) == "Q1: C"


def _plain_counts(lexicon: dict[str, str], order: tuple[str, ...], weighted) -> dict[str, int]:
    """The lexicon count as first written (every token stemmed, every category's stem set asked): the oracle."""
    from interviewsim_core.offline._text import stem, tokens

    stems = {c: {stem(w) for w in words.split()} for c, words in lexicon.items()}
    counts = {c: 0 for c in order}
    for weight, text in weighted:
        for tok in tokens(text):
            for c in order:
                counts[c] += weight * (stem(tok) in stems[c])
    return counts


@pytest.mark.parametrize("module", ["thematic_tagging", "personality_category"])
def test_lexicon_counts_what_the_plain_definition_counts(module: str, monkeypatch) -> None:
    import importlib
    import random

    from interviewsim_core.offline._text import Lexicon

    mod = importlib.import_module(f"interviewsim_core.offline.{module}")
    order = mod._LEXICON.order
    words = " ".join(mod.LEXICON.values()).split()
    vocab = words + [w + s for w in words for s in ("s", "ing", "ed", "ly", "'s")] + ["the", "Fear.", "x", "fo", "ings"]
    vocab += [f"w{i}" for i in range(300)]
    rng = random.Random(7)
    lexicon = Lexicon(mod.LEXICON, order)
    monkeypatch.setattr(Lexicon, "SEEN_MAX", 50)  # the remembered tokens are forgotten many times over
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 40))) for _ in range(400)]
    weighted = [((2, a), (1, b)) for a, b in zip(texts, texts[1:])]
    assert any(lexicon.counts(*w) != dict.fromkeys(order, 0) for w in weighted)
    assert [lexicon.counts(*w) for w in weighted] == [_plain_counts(mod.LEXICON, order, w) for w in weighted]


def test_offline_terse_is_a_second_generator_that_differs_only_in_its_answers() -> None:
    """``offline/terse`` (issue 44's second offline generator) answers generation with the first sentence of the
    offline model's answer, and its own no-context sentence; every other contract, and any other offline name, as
    ``offline/extractive``."""
    from interviewsim_core.offline.generation import FALLBACK, TERSE_FALLBACK

    with_context = generation.build_messages("P1", "Where were you born?", Ctx(None, (
        Pair("Where were you born?", "Born in Lyon in 1931. My father was a painter."),)))
    full = respond(with_context, generation.NAME)
    assert full.count(".") >= 2 and respond(with_context, generation.NAME, "terse") == full.split(". ")[0] + "."
    nothing = generation.build_messages("P1", "Anything?", None)
    assert respond(nothing, generation.NAME) == FALLBACK and respond(nothing, generation.NAME, "terse") == TERSE_FALLBACK
    assert generation.parse(respond(nothing, generation.NAME, "terse"))
    judged = factual_consistency.build_messages("Born in Lyon.", "In Lyon.")
    assert respond(judged, factual_consistency.NAME, "terse") == respond(judged, factual_consistency.NAME)
    assert respond(with_context, generation.NAME, "some-other-name") == full
