"""One study per data root (issue 45): recorded on first write, extended by methods, refused on a change."""

from __future__ import annotations

import pytest

from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.study import STUDY_FILE, StudyMismatch, enter, mismatch, read, study_of


def _cfg(tmp_path, **fields) -> EvalConfig:
    return EvalConfig.load_resolved(env={}, overrides={"data_root": str(tmp_path / "data"), "methods": "simple",
                                                       **fields})


def test_the_first_writer_records_the_study_and_methods_extend_it(tmp_path):
    first = _cfg(tmp_path)
    assert read(first.data_root) is None
    enter(first.data_root, study_of(first))
    assert (first.data_root / STUDY_FILE).is_file()
    more = _cfg(tmp_path, methods="simple,wiki,chrono-100")  # another method is more of the same study
    recorded = enter(more.data_root, study_of(more))
    assert recorded.methods == ("chrono-100", "simple", "wiki")
    assert read(first.data_root).methods == ("chrono-100", "simple", "wiki")
    assert enter(first.data_root, study_of(first)).methods == ("chrono-100", "simple", "wiki")  # never shrinks


@pytest.mark.parametrize("change, named", [
    ({"judges": "openai/fake-judge"}, "judges offline/extractive -> openai/fake-judge"),
    ({"judges": "offline/extractive,openai/fake-judge"}, "judges offline/extractive -> offline/extractive, openai/fake-judge"),
    ({"builder": "openai/fake-builder"}, "builder offline/extractive -> openai/fake-builder"),
    ({"seed": 7}, "generator offline/extractive with another setting or prompt version"),
])
def test_a_configuration_that_changes_results_is_refused_in_one_line(tmp_path, change, named):
    study = _cfg(tmp_path)
    enter(study.data_root, study_of(study))
    before = (study.data_root / STUDY_FILE).read_text()
    other = _cfg(tmp_path, **change)
    with pytest.raises(StudyMismatch) as refused:
        enter(other.data_root, study_of(other))
    message = str(refused.value)
    assert "\n" not in message
    assert named in message and "--data-root" in message and "--rescore" in message
    assert (study.data_root / STUDY_FILE).read_text() == before


def test_a_rescore_may_change_the_judges_and_nothing_else(tmp_path):
    study = _cfg(tmp_path)
    enter(study.data_root, study_of(study))
    judge = ModelConfig(model="offline/extractive", label="judge-b", seed=7)  # a seed: another identity
    rejudged = _cfg(tmp_path).model_copy(update={"judges": (judge,)})
    assert mismatch(rejudged.data_root, study_of(rejudged)) is not None
    assert mismatch(rejudged.data_root, study_of(rejudged), rescore=True) is None
    assert enter(rejudged.data_root, study_of(rejudged), rescore=True).aspects["judges"].shown == "judge-b"
    assert mismatch(study.data_root, study_of(study)) is not None  # the old judges are now the other configuration
    rebuilt = _cfg(tmp_path, builder="openai/fake-builder").model_copy(update={"judges": (judge,)})
    with pytest.raises(StudyMismatch):
        enter(rebuilt.data_root, study_of(rebuilt), rescore=True)


def test_switching_an_optional_table_on_is_not_a_change(tmp_path):
    study = _cfg(tmp_path)
    enter(study.data_root, study_of(study))
    assert mismatch(study.data_root, study_of(_cfg(tmp_path, ps_stability=True, finetune_export=True))) is None
