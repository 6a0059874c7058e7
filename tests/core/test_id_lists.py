"""Id lists as a person reads them (issue 43): a short list whole, a long one as count, first, last and where."""

from __future__ import annotations

from interviewsim_core.id_lists import WHOLE_UP_TO, fits_whole, summarise_ids


def test_a_short_list_is_printed_whole_and_says_nothing_of_where():
    ids = [f"P{i}" for i in range(WHOLE_UP_TO)]
    assert fits_whole(ids)
    assert summarise_ids(ids, "/lists/x.txt") == ", ".join(ids)
    assert summarise_ids([], "/lists/x.txt") == "none"


def test_a_long_list_gives_its_count_its_first_and_last_id_and_where_the_rest_is():
    ids = [f"SYN_{i:04d}" for i in range(1000)]
    assert not fits_whole(ids)
    assert summarise_ids(ids, "/lists/registered.txt") == "SYN_0000 ... SYN_0999 (all 1,000: /lists/registered.txt)"
    assert summarise_ids(ids[:WHOLE_UP_TO + 1], "w").count(",") == 0  # one id past the limit: summarised
