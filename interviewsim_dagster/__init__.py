"""The Dagster layer: thin assets over ``interviewsim_core``, Parquet storage, partitions, checks, automation.

``definitions.py`` is the code location (``workspace.yaml``); ``launch.py`` runs the graph headless.
"""

import os
import warnings

from dagster import BetaWarning, PreviewWarning

# Deliberate uses of beta/preview APIs (backfill_policy, partitioned asset checks, the multi-to-single
# partition mapping): their warnings say nothing a user can act on, so they stay off every command.
warnings.filterwarnings("ignore", category=BetaWarning)
warnings.filterwarnings("ignore", category=PreviewWarning)

EVENT_BATCH_SIZE = "1000"
"""Dagster stores a run's materialisations of one asset as batches of up to this many events
(``DAGSTER_EVENT_BATCH_SIZE``, off by default in Dagster) instead of one at a time; the event log stores a batch
in one transaction per file (``event_log_storage.EngineKeepingSqliteEventLogStorage.store_event_batch``). Set
here, on import, so that every process loading the definitions batches alike: ``interviewsim run``, the UI's
webserver and daemon, the runs they launch. A value already in the environment is kept (0 turns it off)."""
os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", EVENT_BATCH_SIZE)
