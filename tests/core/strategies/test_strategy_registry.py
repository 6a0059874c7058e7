"""Adding a strategy is one module: this test module registers one and uses it everywhere a
built-in strategy is used (names, validation, selection, MCQ groups, the run config, the
generation plan) without any edit elsewhere."""

from __future__ import annotations

from typing import Sequence

import pytest

from _strategy_docs import make_split, test_questions
from interviewsim_core.errors import ConfigError
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.generation import plan_generations
from interviewsim_core.strategies import (
    BaseStrategy,
    GenerationContext,
    MethodSpec,
    register_preset,
    register_strategy,
    registered_strategies,
    resolve_method,
    select_contexts,
    select_group_context,
    unregister_strategy,
    valid_names,
)
from interviewsim_core.strategies._base import context_from_examples


class Earliest(BaseStrategy):
    """The n *oldest* training pairs: a strategy the paper does not have."""

    name = "earliest"
    aliases = ("first",)
    params = ("n",)

    def select(self, split, spec, questions, inputs) -> list[GenerationContext]:
        return [context_from_examples(spec, split.train_pairs[: spec.params["n"]], split)] * len(questions)


@pytest.fixture
def earliest():
    register_strategy(Earliest)
    yield
    unregister_strategy("earliest")
    from interviewsim_core.strategies import presets

    presets._PRESETS.pop("earliest-paper", None)  # leave the shared preset table as other tests expect it


def test_a_registered_strategy_is_nameable_selectable_and_configurable(earliest):
    split = make_split([4, 4, 4, 4, 4])
    qs = test_questions(split)

    spec = resolve_method("earliest-3")
    assert spec == MethodSpec("earliest-3", "earliest", {"n": 3})
    assert resolve_method("first-2").params == {"n": 2}  # the alias is a grammar prefix too
    assert "earliest-<n>" in valid_names() and "earliest" in registered_strategies()
    assert not spec.needs_embedder

    contexts = select_contexts(split, "earliest-3", qs)
    assert [c.qa_ids for c in contexts] == [tuple(p.qa_id for p in split.train_pairs[:3])] * len(qs)
    group = select_group_context(split, "earliest-3", qs[:2], group_id="g")
    assert group.qa_ids == contexts[0].qa_ids and group.strategy == "earliest"

    # The run configuration and the pipeline accept it like any built-in method.
    assert EvalConfig(methods=("earliest-3", "simple")).methods == ("earliest-3", "simple")
    planned = plan_generations(split, "earliest-3", ModelConfig(model="offline/extractive"))
    assert len(planned) == len(qs)
    assert all(p.row["strategy"] == "earliest" and p.row["n_context_used"] == 3 for p in planned)
    last = planned[0].request.messages[-1]
    assert split.train_pairs[0].response in (last["content"] if isinstance(last, dict) else last.content)

    # A preset line for it, the way the paper's names are presets.
    assert register_preset("earliest-paper", "earliest", n=2) is resolve_method("earliest-paper")


def test_parameter_rules_come_from_the_strategy(earliest):
    with pytest.raises(ConfigError, match="n must be >= 1"):
        resolve_method("earliest-0")
    with pytest.raises(ConfigError, match="unknown method"):
        resolve_method("earliest-1-2")


def test_unregistered_strategy_is_unknown():
    assert "earliest" not in registered_strategies()
    with pytest.raises(ConfigError, match="unknown method"):
        resolve_method("earliest-3")
    with pytest.raises(ConfigError, match="unknown strategy"):
        MethodSpec("x", "earliest", {"n": 1})


def test_registration_refuses_collisions_and_non_strategies():
    class Clash(BaseStrategy):
        name = "chrono"  # the alias of chronological
        params = ("m",)

        def select(self, split, spec, questions, inputs):
            return []

    with pytest.raises(ConfigError, match="already"):
        register_strategy(Clash)

    class NotOne:
        name = "nothing"

    with pytest.raises(ConfigError, match="Strategy protocol"):
        register_strategy(NotOne)

    class BadParam(BaseStrategy):
        name = "bad-param"
        params = ("not valid",)

    with pytest.raises(ConfigError, match="identifier"):
        register_strategy(BadParam)
    assert {"chrono", "nothing", "bad-param"}.isdisjoint(registered_strategies())


def test_a_strategy_cannot_select_held_out_pairs(earliest):
    class Leaky(BaseStrategy):
        name = "leaky"
        params = ()

        def select(self, split, spec, questions: Sequence, inputs) -> list[GenerationContext]:
            return [context_from_examples(spec, split.test_pairs[:1], split)] * len(questions)

    register_strategy(Leaky)
    try:
        split = make_split([3, 3, 3, 3, 3])
        with pytest.raises(AssertionError, match="context leak"):
            select_contexts(split, "leaky", test_questions(split))
    finally:
        unregister_strategy("leaky")


def test_builtin_strategies_are_the_seeds_seven():
    assert set(registered_strategies()) >= {
        "no-context", "short-profile", "long-profile", "chronological", "random", "retrieval", "hybrid"}


