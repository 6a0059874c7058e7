"""The sensor that turns corpus files into personality partitions.
Adding a valid ``<corpus>/<ID>/prepared_input.json`` adds partition ``<ID>`` on the next tick; an
invalid file is reported (sensor log and skip reason, with file, JSON path and rule) and not
registered. The cursor holds per-file fingerprints, so a tick re-validates only changed files.
Removing a file never deletes a partition: its materialised results stay browsable. When the config
curates (``transcripts`` + ``manifest``), every personality the manifest names is registered too, so its
curation partitions (``transcript_turns`` .. ``prepared_input``) can be launched before its document exists.
Each tick also records the source version of every registered personality whose transcripts or document changed
(``sources.py``), so an edit shows its results stale without anyone launching anything.
"""


import dagster as dg

from interviewsim_core.id_lists import summarise_ids

from ...registration import manifest_personalities, parse_cursor, scan_corpus
from ...resources import CorpusResource, EvalConfigResource
from .partitions import PERSONALITY, personality_partitions
from .sources import changed

SENSOR_NAME = "personality_registration"
_REPORTED_PROBLEMS = 5


@dg.sensor(
    name=SENSOR_NAME,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Registers every valid personality of the corpus folder (and, when the config curates, of the "
    "manifest) as a partition; reports invalid files; records the source version (personality_sources) of every "
    "personality whose transcripts or document changed, which shows its results stale.",
)
def personality_registration(context: dg.SensorEvaluationContext, corpus: CorpusResource,
                             eval_config: EvalConfigResource) -> dg.SensorResult:
    scan = scan_corpus(corpus.path, parse_cursor(context.cursor))
    known = set(context.instance.get_dynamic_partitions(PERSONALITY))
    new = [pid for pid in dict.fromkeys([*scan.valid, *manifest_personalities(eval_config.get())]) if pid not in known]
    for problem in scan.problems:
        context.log.warning(f"not registered: {problem}")
    if new:
        context.log.info(f"registering {len(new)} personalit{'y' if len(new) == 1 else 'ies'}: "
                         f"{summarise_ids(new, 'the personality partitions (Deployment > Partitions)')}")
    requests = [personality_partitions.build_add_request(new)] if new else []
    # The known ones only: a partition added by this very result cannot take an observation yet (next tick).
    observed = changed(context.instance, eval_config.get(), sorted(known), scan.valid)
    if observed:
        ids = [str(o.partition) for o in observed]
        shown = summarise_ids(ids, "the personality_sources asset's observations")
        context.log.info(f"recorded the source version of {len(ids)} personalit{'y' if len(ids) == 1 else 'ies'} "
                         f"({shown}): newly registered, or their files changed (what was made from the old files "
                         "now shows stale)")
    skip = None
    if not new and not observed:
        skip = f"no new personalities ({len(scan.valid)} valid in {corpus.path}), no source changed"
    if scan.problems:
        shown = "; ".join(scan.problems[:_REPORTED_PROBLEMS])
        more = f" (+{len(scan.problems) - _REPORTED_PROBLEMS} more)" if len(scan.problems) > _REPORTED_PROBLEMS else ""
        note = f"{len(scan.problems)} invalid file problem(s), not registered: {shown}{more}"
        skip = f"{skip}; {note}" if skip else None
    return dg.SensorResult(dynamic_partitions_requests=requests, asset_events=observed, cursor=scan.cursor(),
                           skip_reason=skip)
