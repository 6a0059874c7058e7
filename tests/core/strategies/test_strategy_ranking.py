from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from interviewsim_core.strategies.retrieval import similarities, top_k


@settings(max_examples=150, deadline=None)
@given(
    sims=hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
                    elements=st.integers(-3, 3).map(float)),  # few distinct values: many ties
    k=st.integers(0, 15),
)
def test_top_k_equals_full_sort_with_ties_to_lower_index(sims, k):
    got = top_k(sims, k)
    n_rows, n_cols = sims.shape
    assert got.shape == (n_rows, min(k, n_cols))
    for r in range(n_rows):
        expected = sorted(range(n_cols), key=lambda j: (-sims[r, j], j))[:k]
        assert got[r].tolist() == expected


def test_similarities_are_rounded_and_shape_checked():
    a = np.array([[1.0, 0.0]], np.float32)
    b = np.array([[np.sqrt(0.5), np.sqrt(0.5)], [1.0, 0.0]], np.float32)
    s = similarities(a, b)
    assert s.dtype == np.float64 and s[0, 1] == 1.0 and s[0, 0] == round(float(np.float32(np.sqrt(0.5))), 9)
    with pytest.raises(ValueError, match="shapes"):
        similarities(a, np.zeros((2, 3), np.float32))
