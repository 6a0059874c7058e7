from __future__ import annotations

import pickle

import pytest

from interviewsim_core.errors import ConfigError
from interviewsim_core.strategies import (
    DEFAULT_METHODS,
    PAPER_METHODS,
    PRESETS,
    MethodSpec,
    resolve_method,
    resolve_methods,
)


def test_paper_presets_map_to_the_papers_configurations():
    expected = {
        "simple": ("no-context", {}),
        "wiki": ("short-profile", {}),
        "wiki-long": ("long-profile", {}),
        "chrono-100": ("chronological", {"m": 100}),
        "chrono-500": ("chronological", {"m": 500}),
        "chrono-1000": ("chronological", {"m": 1000}),
        "memory-10": ("retrieval", {"k": 10}),
        "memory-50": ("retrieval", {"k": 50}),
        "memory-100": ("retrieval", {"k": 100}),
        "random-100": ("random", {"k": 100}),
        "hybrid-50-50": ("hybrid", {"k1": 50, "k2": 50}),
    }
    assert {n: (s.strategy, dict(s.params)) for n, s in PRESETS.items()} == expected


def test_default_methods_are_the_eight_plus_three_ablations():
    assert PAPER_METHODS == ("simple", "wiki", "wiki-long", "memory-100", "chrono-100", "chrono-500",
                             "chrono-1000", "hybrid-50-50")
    assert set(DEFAULT_METHODS) == set(PAPER_METHODS) | {"random-100", "memory-10", "memory-50"}
    assert len(DEFAULT_METHODS) == len(set(DEFAULT_METHODS)) == 11
    assert all(resolve_method(n) is PRESETS[n] for n in DEFAULT_METHODS)


@pytest.mark.parametrize(
    "name,strategy,params",
    [
        ("chronological-20", "chronological", {"m": 20}),
        ("chrono-7", "chronological", {"m": 7}),
        ("retrieval-5", "retrieval", {"k": 5}),
        ("memory-3", "retrieval", {"k": 3}),
        ("random-7", "random", {"k": 7}),
        ("hybrid-3-3", "hybrid", {"k1": 3, "k2": 3}),
        ("hybrid-0-4", "hybrid", {"k1": 0, "k2": 4}),
        ("no-context", "no-context", {}),
        ("short-profile", "short-profile", {}),
        ("long-profile", "long-profile", {}),
    ],
)
def test_grammar(name, strategy, params):
    spec = resolve_method(name)
    assert (spec.name, spec.strategy, dict(spec.params)) == (name, strategy, params)
    assert spec.n_requested == sum(params.values())


@pytest.mark.parametrize(
    "bad",
    ["", "chrono", "chrono-0", "chrono-05", "retrieval--1", "random-x", "hybrid-3", "hybrid-0-0", "Simple",
     "memory-100 ", "wiki-short", "hybrid-1-2-3", "chronological-1.5"],
)
def test_unknown_names_raise_config_error_listing_valid_names(bad):
    with pytest.raises(ConfigError) as ei:
        resolve_method(bad)
    msg = str(ei.value)
    assert repr(bad) in msg
    for name in ("simple", "hybrid-50-50", "chronological-<m>", "hybrid-<k1>-<k2>"):
        assert name in msg
    assert isinstance(ei.value, ValueError)


def test_spec_passes_through_and_non_strings_are_refused():
    spec = MethodSpec("mine", "retrieval", {"k": 2})
    assert resolve_method(spec) is spec
    with pytest.raises(ConfigError):
        resolve_method(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "strategy,params",
    [("retrieval", {}), ("retrieval", {"k": 0}), ("retrieval", {"k": True}), ("retrieval", {"k": 2.0}),
     ("chronological", {"k": 3}), ("hybrid", {"k1": 1}), ("no-context", {"m": 1}), ("telepathy", {}),
     ("hybrid", {"k1": 0, "k2": 0}), ("random", {"k": -1})],
)
def test_method_spec_validates(strategy, params):
    with pytest.raises(ConfigError):
        MethodSpec("x", strategy, params)


def test_method_spec_is_frozen_hashable_picklable():
    a = MethodSpec("h", "hybrid", {"k2": 2, "k1": 1})
    b = MethodSpec("h", "hybrid", {"k1": 1, "k2": 2})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert list(a.params) == ["k1", "k2"]
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(TypeError):
        a.params["k1"] = 5  # type: ignore[index]
    with pytest.raises(AttributeError):
        a.name = "other"  # type: ignore[misc]
    assert a.to_dict() == {"name": "h", "strategy": "hybrid", "params": {"k1": 1, "k2": 2}}


def test_resolve_methods_reports_all_bad_names_and_duplicates():
    with pytest.raises(ConfigError) as ei:
        resolve_methods(["simple", "nope", "chrono-0"])
    assert "'nope'" in str(ei.value) and "'chrono-0'" in str(ei.value)
    with pytest.raises(ConfigError, match="twice"):
        resolve_methods(["simple", "simple"])
    assert [s.name for s in resolve_methods(["wiki", "retrieval-2"])] == ["wiki", "retrieval-2"]


def test_generator_and_method_names_the_first_generator_for_plain_keys_and_none_for_calibration():
    from interviewsim_core.strategies import generator_and_method

    assert generator_and_method("chrono-100", "gpt-4.1") == ("gpt-4.1", "chrono-100")
    assert generator_and_method("warm/chrono-100", "gpt-4.1") == ("warm", "chrono-100")
    assert generator_and_method("reference", "gpt-4.1") == ("", "reference")


def test_order_keys_groups_by_generator_in_the_papers_order_calibration_last():
    from interviewsim_core.strategies import order_keys

    keys = ["warm/simple", "reference", "chrono-100", "b/chrono-100", "simple", "warm/chrono-100", "copy-nearest"]
    assert order_keys(keys) == ["simple", "chrono-100", "b/chrono-100", "warm/simple", "warm/chrono-100",
                                "copy-nearest", "reference"]
