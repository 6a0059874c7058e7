"""The Dagster layer: thin assets over ``interviewsim_core``, Parquet storage, partitions, checks, automation.

``definitions.py`` is the code location (``workspace.yaml``); ``launch.py`` runs the graph headless.
"""

import warnings

from dagster import BetaWarning, PreviewWarning

# Deliberate uses of beta/preview APIs (backfill_policy, partitioned asset checks, the multi-to-single
# partition mapping): their warnings say nothing a user can act on, so they stay off every command.
warnings.filterwarnings("ignore", category=BetaWarning)
warnings.filterwarnings("ignore", category=PreviewWarning)
