"""The ``plan`` asset: core's dry-run plan (``interviewsim_core.plan``) as Dagster metadata.

Unpartitioned, in group ``cost``, upstream of nothing and in no job, never auto-materialised:
materialising it calls no model (the plan prices the calls and answers them with the offline
model), so a user sees the bill of the configured run in the UI before launching it. It plans
every personality of the corpus and every configured method, the same as ``interviewsim plan``
without ``--personalities``/``--methods``.
"""

# No `from __future__ import annotations`: Dagster reads the asset's `context` annotation at definition time.
import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig

from ...assets_support import CONFIG

PLAN_ASSET = "plan"


def build_plan_asset(cfg: EvalConfig) -> dg.AssetsDefinition:
    """The ``plan`` asset of one configuration (``cfg`` is the code location's; the resource must match)."""

    @dg.asset(name=PLAN_ASSET, group_name="cost", required_resource_keys={CONFIG}, kinds={"plan"},
              description="Calls, tokens and USD the configured run would cost, and the cache hits it expects. "
                          "Calls no model; materialise it before launching a run.")
    def plan_asset(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        from interviewsim_core.plan import plan_run

        from ...factory import checked_config

        plan = plan_run(checked_config(context, cfg))
        t = plan.totals()
        return dg.MaterializeResult(metadata={
            "plan": dg.MetadataValue.md(plan.markdown()),
            "calls": dg.MetadataValue.int(int(t["calls"])),
            "to_send": dg.MetadataValue.int(int(t["to_send"])),
            "cached": dg.MetadataValue.int(int(t["cached"])),
            "prompt_tokens": dg.MetadataValue.int(int(t["prompt_tokens"])),
            "completion_tokens": dg.MetadataValue.int(int(t["completion_tokens"])),
            "cost_usd": dg.MetadataValue.float(float(t["cost_usd"])),
            "batch_rates": dg.MetadataValue.bool(bool(cfg.batch)),
        })

    return plan_asset
