"""Personality Similarity: one trait per prompt, the tagged reply, modal vote and alignment."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interviewsim_core.contracts import personality as ps
from interviewsim_core.errors import ContractParseError

from contract_strategies import line_text

just_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<>"), min_size=1, max_size=60).filter(
    lambda s: s.strip() != ""
)


@pytest.mark.parametrize("trait", ps.TRAITS)
def test_prompt_names_exactly_one_trait(trait: str) -> None:
    msgs = ps.build_messages(trait, ["I love meeting people.", "I plan everything."])
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert ps.MARKER in system
    assert f"Trait: {trait}" in system and f"Trait: {trait}" in user
    others = [t for t in ps.TRAITS if t != trait]
    assert not any(f"Trait: {t}" in system + user for t in others)
    assert user.splitlines()[-2:] == ["- I love meeting people.", "- I plan everything."]
    assert "<rate>" in system and "Low, Neutral or High" in system


def test_prompt_refuses_bad_inputs() -> None:
    with pytest.raises(ValueError):
        ps.build_messages("Openness", ["x"])
    with pytest.raises(ValueError):
        ps.build_messages("openness", [])
    with pytest.raises(ValueError):
        ps.build_messages("openness", ["x", ""])


@pytest.mark.parametrize(
    "raw, rate, just",
    [
        ("<rate>High</rate> <justification>Talks about friends.</justification>", "High", "Talks about friends."),
        ("  <rate>Low</rate> <justification> quiet </justification>\n", "Low", "quiet"),
        ("<rate>Neutral</rate>\n<justification>Mixed.\nSecond line.</justification>", "Neutral", "Mixed.\nSecond line."),
        ("<rate>Neutral</rate><justification>x</justification>", "Neutral", "x"),
    ],
)
def test_valid(raw: str, rate: str, just: str) -> None:
    r = ps.parse(raw)
    assert (r.rate, r.justification) == (rate, just)


@pytest.mark.parametrize(
    "raw",
    [
        "<rate>high</rate> <justification>x</justification>",
        "<rate>HIGH</rate> <justification>x</justification>",
        "<rate> High</rate> <justification>x</justification>",
        "<rate>Medium</rate> <justification>x</justification>",
        "<rate>High</rate> <justification>   </justification>",
        "<rate>High</rate> <justification></justification>",
        "<rate>High</rate>",
        "<justification>x</justification> <rate>High</rate>",
        "Rating: <rate>High</rate> <justification>x</justification>",
        "<rate>High</rate> <justification>x</justification> Thanks!",
        "<rate>High</rate> and <justification>x</justification>",
        "<rate>High</rate> <justification>x</justification><justification>y</justification>",
        "<rate>High</rate> <justification>x <rate>Low</rate></justification>",
        "```\n<rate>High</rate> <justification>x</justification>\n```",
        "High",
        "",
    ],
)
def test_malformed(raw: str) -> None:
    with pytest.raises(ContractParseError):
        ps.parse(raw)


@given(rate=st.sampled_from(ps.LEVELS), just=just_text, sep=st.sampled_from([" ", "", "\n", "  \t"]))
def test_property_valid(rate: str, just: str, sep: str) -> None:
    r = ps.parse(f"<rate>{rate}</rate>{sep}<justification>{just}</justification>")
    assert r.rate == rate and r.justification == just.strip()


@given(
    rate=st.sampled_from(ps.LEVELS),
    just=just_text,
    extra=line_text.filter(lambda s: s.strip() != ""),
    mutation=st.sampled_from(["lower", "upper", "prefix", "suffix", "blank", "drop_just", "swap"]),
)
def test_property_mutated(rate, just, extra, mutation) -> None:
    r, j = rate, just
    if mutation == "lower":
        r = rate.lower()
    elif mutation == "upper":
        r = rate.upper()
    elif mutation == "blank":
        j = " "
    raw = f"<rate>{r}</rate> <justification>{j}</justification>"
    if mutation == "prefix":
        raw = extra.strip() + " " + raw
    elif mutation == "suffix":
        raw = raw + " " + extra.strip()
    elif mutation == "drop_just":
        raw = f"<rate>{r}</rate>"
    elif mutation == "swap":
        raw = f"<justification>{j}</justification> <rate>{r}</rate>"
    with pytest.raises(ContractParseError):
        ps.parse(raw)


@pytest.mark.parametrize(
    "votes, expected",
    [
        (("High", "High", "High"), ("High", 1.0)),
        (("High", "Low", "High"), ("High", 2 / 3)),
        (("Low", "Low", "Neutral"), ("Low", 2 / 3)),
        (("Neutral", "High", "Neutral"), ("Neutral", 2 / 3)),
        (("Low", "Neutral", "High"), ("Neutral", 1 / 3)),
        (("High", "Low", "Neutral"), ("Neutral", 1 / 3)),
    ],
)
def test_modal_vote(votes, expected) -> None:
    level, conf = ps.modal_vote(votes)
    assert level == expected[0] and conf == pytest.approx(expected[1])


@pytest.mark.parametrize("votes", [(), ("High",), ("High", "High"), ("High",) * 4, ("High", "High", "high")])
def test_modal_vote_refuses_bad_input(votes) -> None:
    with pytest.raises(ValueError):
        ps.modal_vote(votes)


def _levels(*values: str) -> dict[str, str]:
    return dict(zip(ps.TRAITS, values))


@pytest.mark.parametrize(
    "ref, gen, expected",
    [
        (_levels("High", "High", "High", "High", "High"), _levels("High", "High", "High", "High", "High"), 1.0),
        (_levels("High", "High", "High", "High", "High"), _levels("Low", "Low", "Low", "Low", "Low"), 0.0),
        (_levels("High", "Neutral", "Low", "High", "Neutral"), _levels("Neutral", "Neutral", "Low", "High", "Neutral"), 0.9),
        (_levels("Low", "Low", "Neutral", "High", "High"), _levels("High", "Neutral", "Neutral", "Low", "High"), 0.5),
    ],
)
def test_alignment(ref, gen, expected) -> None:
    assert ps.alignment(ref, gen) == pytest.approx(expected)


def test_alignment_refuses_missing_traits_and_bad_levels() -> None:
    full = _levels("High", "High", "High", "High", "High")
    with pytest.raises(ValueError):
        ps.alignment({k: v for k, v in full.items() if k != "neuroticism"}, full)
    with pytest.raises(ValueError):
        ps.alignment(full, {**full, "openness": "Medium"})


def test_constants() -> None:
    assert ps.LEVEL_VALUE == {"Low": 1, "Neutral": 2, "High": 3}
    assert ps.N_VOTES == 3
