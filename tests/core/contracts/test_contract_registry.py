"""The contract registry: every contract of seed 000 plus the premise passes, versions, no heavy imports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from interviewsim_core.contracts import REGISTRY, version_of

EXPECTED = {
    "generation", "content_similarity", "fact_summary", "factual_consistency", "personality",
    "atomic_item", "mcq_generation", "mcq_answering", "premise_pass1", "premise_pass2",
    "speaker_attribution", "transcript_quality", "qa_structuring", "thematic_tagging", "personality_category",
}


def test_registry_lists_every_contract() -> None:
    assert set(REGISTRY) == EXPECTED
    for name, c in REGISTRY.items():
        assert c.NAME == name
        assert callable(c.parse)
        assert version_of(name) == f"{c.CONTRACT_VERSION}+{c.PARSER_VERSION}"


def test_unknown_contract() -> None:
    with pytest.raises(KeyError):
        version_of("nope")


def test_markers_are_distinct_and_in_their_templates() -> None:
    markers = {name: REGISTRY[name].MARKER for name in EXPECTED if not name.startswith("premise")}
    assert len(set(markers.values())) == len(markers)
    for a, ma in markers.items():
        for b, mb in markers.items():
            assert a == b or ma not in mb


def test_premise_adapters_delegate_to_the_premise_parsers() -> None:
    from interviewsim_core.contracts import premise
    from interviewsim_core.errors import ContractParseError

    assert REGISTRY["premise_pass1"].parse is premise.parse_pass1
    assert REGISTRY["premise_pass2"].parse is premise.parse_pass2
    with pytest.raises(ContractParseError):
        REGISTRY["premise_pass1"].parse("not json")


def test_importing_contracts_pulls_in_neither_dagster_nor_litellm() -> None:
    code = "import sys, interviewsim_core.contracts, interviewsim_core.offline as o; o.responders(); " \
           "print('dagster' in sys.modules, 'litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"
