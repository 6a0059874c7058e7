"""The two partition dimensions and their product.

``personality`` is dynamic: a new corpus file becomes a new partition with no redeploy (the sensor
and ``interviewsim register`` add keys). ``method`` is static per deployment: it comes from the
configured method set, so changing the set is a code-location reload, like any config change.

Multi-partition keys join dimensions in alphabetical order of dimension name (``method|personality``)
and ``context.partition_key`` is a plain string under some launch paths: always go through
``dims_of`` instead of splitting strings.
"""

from __future__ import annotations

from collections.abc import Sequence

import warnings

import dagster as dg
from dagster import BetaWarning

PERSONALITY = "personality"
METHOD = "method"

personality_partitions = dg.DynamicPartitionsDefinition(name=PERSONALITY)


def method_partitions(methods: Sequence[str]) -> dg.StaticPartitionsDefinition:
    """One partition per configured method name, in the configured order."""
    return dg.StaticPartitionsDefinition(list(methods))


def personality_x_method(methods: Sequence[str]) -> dg.MultiPartitionsDefinition:
    return dg.MultiPartitionsDefinition(
        {PERSONALITY: personality_partitions, METHOD: method_partitions(methods)}
    )


def dims_of(partitions_def: dg.PartitionsDefinition, key: str) -> dict[str, str]:
    """``{"personality": ..., "method": ...}`` for a P x M key, ``{"personality": key}`` for a P key."""
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return dict(partitions_def.get_partition_key_from_str(str(key)).keys_by_dimension)
    return {PERSONALITY: str(key)}


def pxm_key(personality_id: str, method: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({PERSONALITY: personality_id, METHOD: method})


with warnings.catch_warnings():
    warnings.simplefilter("ignore", BetaWarning)  # a deliberate, documented use of a beta mapping
    to_personality = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name=PERSONALITY)
"""P x M asset reading a P asset: each (personality, method) reads its personality's partition."""
