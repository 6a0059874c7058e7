"""One small real run shared by the report tests: the pipeline on two sample personalities,
two methods and two judges with the offline model, plus premise verdicts, written to Parquet."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import pandas as pd
import pytest

PERSONALITIES = ("SYN_AUERLUND", "SYN_FENWRIGHT")
METHODS = ("simple", "chrono-100")
JUDGES = ("judge-a", "judge-b")


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Path:
    """Data root of a finished small evaluation (Parquet under ``<root>/<asset>/...``)."""
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.factories import make_gateway
    from interviewsim_core.pipeline.runner import load_splits, run_evaluation
    from interviewsim_core.pipeline.storage import partition_path, write_frame
    from interviewsim_core.premise import premise_verdicts_for

    root = tmp_path_factory.mktemp("report_run")
    cfg = EvalConfig(data_root=root, methods=METHODS,
                     judges=tuple(ModelConfig(model="offline/extractive", label=j) for j in JUDGES))
    gw = make_gateway(cfg)
    tables = run_evaluation(cfg, gateway=gw, personalities=PERSONALITIES)
    splits = load_splits(cfg, PERSONALITIES)
    for pid, split in splits.items():
        fs = tables["fact_summary"][tables["fact_summary"]["personality_id"] == pid]
        at = tables["atomic_items"][tables["atomic_items"]["personality_id"] == pid]
        verdicts = premise_verdicts_for(split, fs, at, cfg.premise_judge, gw)
        write_frame(verdicts, "premise_verdicts", partition_path(root, "premise_verdicts", pid))
    return root


def read_all(root: Path, asset: str) -> pd.DataFrame:
    """Independent reader for the tests: plain pandas over every Parquet file of an asset."""
    files = sorted((root / asset).rglob("*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
