"""The explorer tests' data root: a tiny corpus written by the test, run with the offline model.

Two fictional people, six short interviews each. The early interviews say the opposite of the late
ones on one topic ("I do not swim..." then "I swim..."), so the offline FC judge finds
Contradictions; one question carries hostile markup that must stay inert text in every page.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PEOPLE = ("VIEW_ALDER", "VIEW_BRISK")
METHODS = ("simple", "chrono-100", "memory-10")
JUDGES = ("judge-a", "judge-b")
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> & "quotes"'
TOPICS = ("the harbour ferry", "winter swimming", "the bakery on Quay Street", "rowing races")


def person_document(pid: str, n_interviews: int = 6, pairs: int = 3) -> dict:
    interviews = []
    for i in range(n_interviews):
        late = i >= n_interviews // 2
        qa = []
        for j in range(pairs):
            topic = TOPICS[(i + j) % len(TOPICS)]
            stance = "I swim in the cold harbour every winter morning." if late else \
                "I do not swim in the cold harbour every winter morning."
            question = f"What do you think about {topic} these days, interview {i}?"
            if pid == PEOPLE[0] and i == n_interviews - 1 and j == 0:
                question = f"{HOSTILE} What about {topic}?"
            qa.append({
                "qa_id": f"{pid}_Q{i}_{j}",
                "question": question,
                "response": f"{stance} I have cared about {topic} since {2000 + i}. "
                            f"My neighbour told me a story about {topic} and the tides.",
                "tags": ["Motivations and Values"] if j % 2 == 0 else [],
            })
        interviews.append({"interview_id": f"{pid}_I{i}", "sequence": i + 1, "qa_pairs": qa})
    return {"schema_version": "1.0", "personality_id": pid,
            "personality": {"profile": f"{pid} is a fictional harbour pilot.",
                            "long_profile": f"{pid} is a fictional harbour pilot who rows."},
            "interviews": interviews}


GENERATORS = ({"model": "offline/extractive"}, {"model": "offline/extractive", "label": "warm", "temperature": 0.7})
"""A two-generator study (issue 44): the first keeps the plain method names (label ``extractive``), the second's
keys are ``warm/<method>``."""
TWO_GENERATOR_METHODS = ("simple", "chrono-100", "reference")


def build_data_root(base: Path, generators: tuple[dict, ...] | None = None,
                    methods: tuple[str, ...] = METHODS) -> Path:
    """Write the corpus under ``base/corpus`` and run the whole evaluation into ``base/data`` (with
    ``generators``: every one of them, keyed as a study keys them)."""
    from interviewsim_core.factories import make_gateway
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import run_evaluation

    corpus, root = base / "corpus", base / "data"
    for pid in PEOPLE:
        (corpus / pid).mkdir(parents=True, exist_ok=True)
        (corpus / pid / "prepared_input.json").write_text(json.dumps(person_document(pid)), encoding="utf-8")
    cfg = EvalConfig(corpus=corpus, data_root=root, methods=methods, cache_path=root / ".cache" / "llm.sqlite",
                     judges=tuple(ModelConfig(model="offline/extractive", label=j) for j in JUDGES),
                     **({"generators": generators} if generators else {}))
    run_evaluation(cfg, gateway=make_gateway(cfg), keep=())
    return root
