"""The report's calibration section (issue 32): normalised table, judge audits, hand-computed."""

from __future__ import annotations

import math

import pandas as pd

from interviewsim_core.report import calibration as cal


def test_length_audit_hand_computed():
    # One question, two candidates: 10 chars scored 2, 30 chars scored 4. Within-question deviations
    # x = (-10, +10), y = (-1, +1): r = 1, slope 0.1 per char (10 per 100); held fixed, both score 3.
    cs = pd.DataFrame([{"personality_id": "P", "method": m, "judge": "j", "qa_id": "q", "score": s, "status": "ok"}
                       for m, s in (("short", 2), ("long", 4))])
    gens = pd.DataFrame([{"personality_id": "P", "method": "short", "qa_id": "q", "generated": "x" * 10},
                         {"personality_id": "P", "method": "long", "qa_id": "q", "generated": "x" * 30}])
    corr, adj = cal.length_audit(cs, gens)
    r = corr.iloc[0]
    assert (r.judge, r.n, r.questions, r.r_within_question, r.note) == ("j", 2, 1, 1.0, "")
    assert math.isclose(r.slope_per_100_chars, 10.0)
    assert adj.set_index("method")["cs_length_adjusted"].to_dict() == {"long": 3.0, "short": 3.0}
    assert adj.set_index("method")["cs_raw"].to_dict() == {"long": 4.0, "short": 2.0}


def test_length_audit_says_when_undefined():
    cs = pd.DataFrame([{"personality_id": "P", "method": m, "judge": "j", "qa_id": "q", "score": 5, "status": "ok"}
                       for m in ("a", "b")])
    gens = pd.DataFrame([{"personality_id": "P", "method": m, "qa_id": "q", "generated": t}
                         for m, t in (("a", "xx"), ("b", "xxxx"))])
    corr, _ = cal.length_audit(cs, gens)
    assert math.isnan(corr.iloc[0].r_within_question) and "scores do not vary" in corr.iloc[0].note


def test_self_preference_flags_the_generators_family():
    judged = pd.DataFrame([{"judge": "a", "model": "openai/gpt-4o"}, {"judge": "b", "model": "anthropic/claude"}])
    gens = pd.DataFrame([{"model": "openai/gpt-4o-mini"}, {"model": "calibration (no model)"}])
    t = cal.self_preference(judged, gens).set_index("judge")
    assert bool(t.loc["a", "same_family"]) and not bool(t.loc["b", "same_family"])
    assert t.loc["a", "generator_families"] == "openai"
    assert cal.model_family("gpt-4o-mini") == "gpt"


def test_reference_contradictions_listed():
    fc = pd.DataFrame([
        {"personality_id": "P", "method": "reference", "qa_id": "q2", "judge": "j", "label": "Contradiction",
         "explanation": "says 1990, summary says 1991"},
        {"personality_id": "P", "method": "reference", "qa_id": "q1", "judge": "j", "label": "Entailment", "explanation": ""},
        {"personality_id": "P", "method": "simple", "qa_id": "q1", "judge": "j", "label": "Contradiction", "explanation": ""},
    ])
    out = cal.reference_contradictions(fc)
    assert out.to_dict("records") == [{"personality_id": "P", "qa_id": "q2", "judge": "j",
                                       "explanation": "says 1990, summary says 1991"}]


def test_the_readers_from_disk_match_the_frames(tmp_path):
    """The report reads lengths and the reference's contradictions partition by partition, in Arrow, with the text
    left out of its tables: the same rows as the in-memory functions over the whole frames."""
    from interviewsim_core.pipeline.storage import partition_path, write_frame
    from interviewsim_core.pipeline.tables import empty_frame

    def table(records: list[dict], name: str) -> pd.DataFrame:  # the table's other columns empty
        return pd.DataFrame(records, columns=empty_frame(name).columns)

    def rows(pid: str, method: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        gens = table([{"personality_id": pid, "method": method, "qa_id": f"q{i}", "status": "ok",
                       "generated": None if i == 2 else "é" * (i + 3)} for i in range(3)], "generations")
        fc = table([{"personality_id": pid, "method": method, "qa_id": f"q{i}", "judge": "j",
                     "status": "ok", "label": label, "explanation": f"{pid} {method} {i}"}
                    for i, label in enumerate(("Contradiction", "Entailment", "Contradiction"))], "factual_consistency")
        return gens, fc

    frames = {(pid, m): rows(pid, m) for pid in ("P1", "P2") for m in ("reference", "simple")}
    for (pid, m), (gens, fc) in frames.items():
        write_frame(gens, "generations", partition_path(tmp_path, "generations", pid, m))
        write_frame(fc, "factual_consistency", partition_path(tmp_path, "factual_consistency", pid, m))
    gens = pd.concat([g for g, _ in frames.values()], ignore_index=True)
    fc = pd.concat([f for _, f in frames.values()], ignore_index=True)
    key = ["personality_id", "method", "qa_id"]
    expected = cal.with_lengths(gens).sort_values(key).reset_index(drop=True)
    got = cal.read_lengths(tmp_path).sort_values(key).reset_index(drop=True)
    assert len(got) == 8 and got["length"].tolist() == expected["length"].tolist()  # characters, not bytes
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    listed = cal.reference_contradictions(cal.read_reference_contradictions(tmp_path))
    assert listed.to_dict("records") == cal.reference_contradictions(fc).to_dict("records")
    assert len(listed) == 4
    assert cal.read_lengths(tmp_path / "none").empty and cal.read_reference_contradictions(tmp_path / "none").empty
