from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from interviewsim_core.metrics.statistics import (
    bootstrap_ci,
    cohen_kappa,
    holm,
    paired_method_test,
    paired_permutation_test,
    spearman,
)


def test_bootstrap_small_samples_give_nan_bounds():
    empty = bootstrap_ci([])
    assert empty.n == 0 and all(math.isnan(v) for v in (empty.estimate, empty.low, empty.high))
    one = bootstrap_ci([3.0, float("nan")])
    assert one.n == 1 and one.estimate == 3.0 and math.isnan(one.low) and math.isnan(one.high)
    const = bootstrap_ci([2.0, 2.0, 2.0])
    assert (const.estimate, const.low, const.high) == (2.0, 2.0, 2.0)


def test_bootstrap_interval_matches_normal_theory_and_is_seeded():
    x = np.random.default_rng(1).normal(10.0, 2.0, size=400)
    ci = bootstrap_ci(x, confidence=0.95, n_resamples=3000, seed=3)
    half = 1.959964 * x.std(ddof=1) / math.sqrt(len(x))
    assert ci.low < x.mean() < ci.high and ci.estimate == pytest.approx(x.mean())
    assert (ci.high - ci.low) / 2 == pytest.approx(half, rel=0.12)
    assert bootstrap_ci(x, n_resamples=3000, seed=3) == ci
    narrower = bootstrap_ci(x, confidence=0.5, n_resamples=3000, seed=3)
    assert narrower.high - narrower.low < ci.high - ci.low


@pytest.mark.parametrize(
    "diffs,p",
    [([1.0, 2.0, 3.0], 2 / 8), ([1.0] * 5, 2 / 32), ([1.0, -1.0], 1.0), ([2.0, 1.0, -1.0], 6 / 8)],
)
def test_permutation_exact_known_values(diffs, p):
    b = np.zeros(len(diffs))
    res = paired_permutation_test(np.array(diffs), b)
    assert res.exact and res.n == len(diffs)
    assert res.mean_difference == pytest.approx(np.mean(diffs))
    assert res.p_value == pytest.approx(p)


def test_permutation_exact_equals_full_sign_flip_enumeration():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=9), rng.normal(size=9) + 0.4
    d = a - b
    obs = abs(d.mean())
    flips = [abs(np.mean(d * np.array(s))) for s in itertools.product((1, -1), repeat=len(d))]
    expected = np.mean([f >= obs - 1e-12 for f in flips])
    assert paired_permutation_test(a, b).p_value == pytest.approx(expected)


def test_permutation_monte_carlo_is_seeded_and_detects_effects():
    rng = np.random.default_rng(7)
    a = rng.normal(size=40)
    b = a - 1.0 + rng.normal(scale=0.3, size=40)
    r1 = paired_permutation_test(a, b, seed=11, n_resamples=999)
    assert not r1.exact and r1.p_value < 0.01
    assert paired_permutation_test(a, b, seed=11, n_resamples=999) == r1
    null = paired_permutation_test(a, a + rng.normal(scale=0.01, size=40) * 0, seed=1)
    assert null.p_value == 1.0 and null.mean_difference == 0.0


def test_permutation_drops_incomplete_pairs_and_checks_lengths():
    res = paired_permutation_test([1.0, np.nan, 2.0, 3.0], [0.0, 0.0, np.nan, 0.0])
    assert res.n == 2 and res.mean_difference == pytest.approx(2.0)
    assert math.isnan(paired_permutation_test([np.nan], [1.0]).p_value)
    with pytest.raises(ValueError):
        paired_permutation_test([1.0], [1.0, 2.0])


def test_paired_method_test_aligns_personalities():
    df = pd.DataFrame({
        "personality_id": ["p1", "p2", "p3", "p1", "p2", "p4", "p1"],
        "method": ["a", "a", "a", "b", "b", "b", "a"],
        "judge": ["j", "j", "j", "j", "j", "j", "other"],
        "cs_mean": [3.0, 4.0, 5.0, 2.0, 2.5, 1.0, 9.0],
    })
    res = paired_method_test(df, "cs_mean", "a", "b", "j")
    assert res.n == 2 and res.mean_difference == pytest.approx(((3 - 2) + (4 - 2.5)) / 2)
    assert res.p_value == pytest.approx(0.5)  # 2 of 4 sign patterns are as extreme


def test_cohen_kappa_known_values():
    # Textbook 2x2 example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> kappa 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    # 3 ordinal levels, worked by hand: unweighted 0.2, linear 3/7, quadratic 7/11.
    order = ["Low", "Neutral", "High"]
    ra, rb = ["Low", "Neutral", "High", "High"], ["Low", "High", "High", "Neutral"]
    assert cohen_kappa(ra, rb, labels=order) == pytest.approx(0.2)
    assert cohen_kappa(ra, rb, weights="linear", labels=order) == pytest.approx(3 / 7)
    assert cohen_kappa(ra, rb, weights="quadratic", labels=order) == pytest.approx(7 / 11)


def test_cohen_kappa_edges():
    assert cohen_kappa([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["x", "x"], ["x", "x"]))
    assert math.isnan(cohen_kappa([], []))
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 2])
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["b"], labels=["a"])
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["a"], weights="cubic")  # type: ignore[arg-type]


def test_spearman_known_value_and_edges():
    rho, p = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    assert rho == pytest.approx(0.8207826816681233) and p == pytest.approx(0.08858700531354381)
    rho2, _ = spearman([1, 2, np.nan, 4, 5, 6], [1, 2, 3, 4, 5, 6])
    assert rho2 == pytest.approx(1.0)
    assert all(math.isnan(v) for v in spearman([1, 2], [2, 1]))
    assert all(math.isnan(v) for v in spearman([1, 1, 1], [1, 2, 3]))


def _brute_force_p(d, alternative):
    """Every sign pattern of every difference (zeros included) with plain Python: the definition."""
    obs = sum(d)
    hits = total = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        s = sum(x * sg for x, sg in zip(d, signs))
        total += 1
        if alternative == "two-sided":
            hits += abs(s) >= abs(obs) - 1e-9
        elif alternative == "greater":
            hits += s >= obs - 1e-9
        else:
            hits += s <= obs + 1e-9
    return hits / total


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("case", range(6))
def test_permutation_exact_matches_brute_force_enumeration(case, alternative):
    """Ties, zero differences and integer-valued (CS-like) differences included."""
    rng = np.random.default_rng(100 + case)
    n = 4 + 2 * case
    a = rng.integers(1, 6, size=n).astype(float) if case % 2 else rng.normal(size=n)
    b = a - rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0], size=n)
    res = paired_permutation_test(a, b, alternative=alternative)
    assert res.exact
    assert res.p_value == pytest.approx(_brute_force_p(list(a - b), alternative), abs=1e-12)


def test_permutation_is_exact_up_to_twenty_nonzero_pairs_then_monte_carlo():
    rng = np.random.default_rng(3)
    d = rng.normal(loc=0.3, size=20)
    exact = paired_permutation_test(d, np.zeros(20))
    assert exact.exact
    # Zero differences do not count towards the 20: 20 non-zero among 30 pairs is still exact.
    padded = paired_permutation_test(np.concatenate([d, np.zeros(10)]), np.zeros(30))
    assert padded.exact and padded.p_value == pytest.approx(exact.p_value) and padded.n == 30
    mc = paired_permutation_test(np.append(d, 0.1), np.zeros(21), seed=2, n_resamples=20000)
    assert not mc.exact and 0 < mc.p_value <= 1
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.02)  # one more small pair barely moves it
    # 2^20 patterns: the observed pattern and its mirror are the two most extreme -> 2 / 2^20.
    big = paired_permutation_test(np.arange(1.0, 21.0), np.zeros(20))
    assert big.exact and big.p_value == pytest.approx(2 / 2**20)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_bootstrap_resamples_in_bounded_batches_with_the_same_interval(monkeypatch, method):
    """Batched resampling (bounded memory on a paper-sized table) draws the same resamples, so the
    interval is the one an all-at-once bootstrap gives."""
    import numpy as np

    from interviewsim_core.metrics import statistics

    x = np.random.default_rng(3).random(2_000)
    whole = statistics.bootstrap_ci(x, n_resamples=999, seed=5, method=method)
    monkeypatch.setattr(statistics, "RESAMPLE_BATCH_VALUES", 2_000 * 7)  # 7 resamples per batch
    batched = statistics.bootstrap_ci(x, n_resamples=999, seed=5, method=method)
    assert (batched.low, batched.high) == (whole.low, whole.high)


def test_holm_against_hand_computed_values():
    # Sorted: 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> 0.06 (never below an earlier one).
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # Capped at 1; a NaN (a test with no pairs) stays NaN and is not counted in the family.
    out = holm([0.2, float("nan"), 0.6])
    assert out[0] == pytest.approx(0.4) and math.isnan(out[1]) and out[2] == pytest.approx(0.6)
    assert holm([0.5, 0.7, 0.9]) == pytest.approx([1.0, 1.0, 1.0])
    assert holm([0.02]) == pytest.approx([0.02]) and len(holm([])) == 0
