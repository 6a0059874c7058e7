"""The held-out split: the first asset of every personality partition."""

import dagster as dg

from interviewsim_core.pipeline.split_tables import split_table

from ...assets_support import SINGLE_RUN, personality_keys
from ...batching import describe
from ...versioning import versioned
from ...resources import CorpusResource
from ..evaluate.automation import FOLLOW_UPSTREAM
from .partitions import personality_partitions

GROUP = "corpus"


@dg.asset(
    partitions_def=personality_partitions,
    group_name=GROUP,
    backfill_policy=SINGLE_RUN,
    automation_condition=FOLLOW_UPSTREAM,
    kinds={"parquet"},
    description="Every QA pair of the personality, marked train or test (latest ceil(0.2 N) interviews held out).",
)
@versioned
def heldout_split(context: dg.AssetExecutionContext, corpus: CorpusResource):
    frames = {pid: split_table(corpus.split(pid)) for pid in personality_keys(context)}
    describe(context, frames)
    return frames


def build_assets() -> list[dg.AssetsDefinition]:
    return [heldout_split]
