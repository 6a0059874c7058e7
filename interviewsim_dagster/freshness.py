"""Which asset partitions ``interviewsim run`` may skip: materialised with the current code, on inputs
whose content has not changed since.

Why: re-materialising an up-to-date partition costs no model call (the cache answers) but writes a
new materialisation, and before content versions that alone made the automation re-run every
method downstream. Skipping is decided per asset partition, just before its job runs, so a
partition whose upstream was re-run in this very command with different content is re-run too.

"Up to date" means: a materialisation exists and the run's data root holds its table (one instance serves
several data roots); its table has no ``failed`` row (metadata
``failed_calls``: a call that got no answer, a rate limit or a timeout, is retried by the next run, as
the direct runner's rerun does; only its calls are sent again, the rest are cache hits); its code
version is the asset's current one (for versioned assets: model identities, judges); and every
upstream partition it reads has the same data version now as just before that materialisation
(``versioning``: a content hash).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

import dagster as dg

from interviewsim_core.dataroot import exists
from interviewsim_core.pipeline.steps import BY_NAME
from interviewsim_core.pipeline.storage import partition_path
from interviewsim_core.pipeline.table_summary import FAILED_CALLS

from .defs.corpus.partitions import METHOD, PERSONALITY, dims_of, pxm_key
from .defs.corpus.sources import DATA_VERSION_TAG
from .versioning import SPLIT_VERSION, transcripts_changed

CODE_VERSION_TAG = "dagster/code_version"


def _latest(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None, before: int | None = None):
    flt = dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition] if partition else None,
                                before_storage_id=before)
    mats = instance.fetch_materializations(flt, limit=1).records
    obs = instance.fetch_observations(flt, limit=1).records
    return mats[0] if mats else None, max(mats + obs, key=lambda r: r.storage_id, default=None)


def data_version(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None,
                 before: int | None = None) -> str | None:
    """The partition's data version (its latest materialisation or observation), optionally as of ``before``."""
    _, rec = _latest(instance, key, partition, before)
    event = rec.asset_event if rec is not None else None
    return (event.tags or {}).get(DATA_VERSION_TAG) if event is not None else None


class NewestEvents:
    """Each partition's newest event id (materialisation or observation), one query per asset and event type.

    Why: deciding that a partition is current compares each parent partition's data version now with the one just
    before the partition's materialisation, four event reads per parent partition; at 1,000 personalities an
    up-to-date ``interviewsim run`` spent 12 minutes on them (73,000 partitions; docs/PERFORMANCE.md). A parent
    whose newest event is older than the child's materialisation has not changed since, which these ids say
    without reading an event. Read once per ``narrow``, before any of its runs start."""

    def __init__(self, instance: dg.DagsterInstance):
        self.instance = instance
        self._by_asset: dict[dg.AssetKey, dict[str, int]] = {}

    def of(self, key: dg.AssetKey, partition: str) -> int | None:
        ids = self._by_asset.get(key)
        if ids is None:
            storage = self.instance.event_log_storage
            ids = dict(storage.get_latest_storage_id_by_partition(key, dg.DagsterEventType.ASSET_OBSERVATION))
            for part, sid in storage.get_latest_storage_id_by_partition(
                    key, dg.DagsterEventType.ASSET_MATERIALIZATION).items():
                ids[part] = max(sid, ids.get(part, sid))
            self._by_asset[key] = ids
        return ids.get(partition)


def parent_partitions(child_pdef, parent_pdef, partition: str | None, instance: dg.DagsterInstance,
                      methods: Sequence[str]) -> list[str | None]:
    """The parent partitions one child partition reads, for this project's three partitionings."""
    if parent_pdef is None:
        return [None]
    registered = list(instance.get_dynamic_partitions(PERSONALITY))
    parent_is_pxm = isinstance(parent_pdef, dg.MultiPartitionsDefinition)
    if child_pdef is None:
        return [str(pxm_key(p, m)) for p in registered for m in methods] if parent_is_pxm else registered
    dims = dims_of(child_pdef, partition)
    if parent_is_pxm:
        if METHOD in dims:
            return [partition]
        return [str(pxm_key(dims[PERSONALITY], m)) for m in methods]
    return [dims[PERSONALITY]]


def stored(data_root, key: dg.AssetKey, partition: str | None, partitions_def) -> bool:
    """Whether ``data_root`` holds the table of ``key``'s ``partition``. A step that writes files rather than a table
    (the report) counts as held: it is re-made when what it reads is."""
    step = BY_NAME.get(key.path[-1])
    if data_root is None or step is None or step.writes_files:
        return True
    dims = {} if partition is None else dims_of(partitions_def, partition)
    return exists(partition_path(data_root, step.name, dims.get(PERSONALITY), dims.get(METHOD)))


def is_up_to_date(graph, instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None,
                  methods: Sequence[str], split_versions: dict[str, str] | None = None, data_root=None,
                  newest: NewestEvents | None = None) -> bool:
    """See the module; ``newest``: the parents' newest event ids, shared by the calls of one ``narrow``."""
    newest = newest or NewestEvents(instance)
    node = graph.get(key)
    mat, _ = _latest(instance, key, partition)
    if mat is None or not stored(data_root, key, partition, node.partitions_def):
        return False  # never made, or made into another data root (the instance serves several)
    metadata = mat.asset_materialization.metadata
    failed = metadata.get(FAILED_CALLS)
    if getattr(failed, "value", failed):
        return False  # written with failed calls: the next run retries them
    if partition is not None and transcripts_changed(metadata, dims_of(node.partitions_def, partition)[PERSONALITY]):
        return False  # a curation whose transcripts, manifest rows or review decisions changed since
    tags = mat.asset_materialization.tags or {}
    if node.code_version is not None and tags.get(CODE_VERSION_TAG) != node.code_version:
        return False
    step = BY_NAME.get(key.path[-1])
    if partition is not None and split_versions and not (step is not None and step.curation and not step.makes_document):
        # (a curation step before prepared_input is made before the document: it records no split version)
        person = dims_of(node.partitions_def, partition).get(PERSONALITY)
        recorded = metadata.get(SPLIT_VERSION)
        if person in split_versions and getattr(recorded, "value", recorded) != split_versions[person]:
            return False  # the personality's corpus file changed since (or the row predates split versions)
    for parent in node.parent_keys:
        pnode = graph.get(parent)
        for pp in parent_partitions(node.partitions_def, pnode.partitions_def, partition, instance, methods):
            if pp is not None and pnode.partitions_def is not None:
                latest = newest.of(parent, pp)
                if latest is None or latest < mat.storage_id:
                    continue  # never run (allowed for the aggregates), or not changed since: nothing to compare
            now = data_version(instance, parent, pp)
            if now is None:
                continue  # an upstream partition not run (allowed for the aggregates); nothing changed there
            if data_version(instance, parent, pp, before=mat.storage_id) != now and not _same_action(instance, mat, parent, pp):
                return False
    return True


def _same_action(instance: dg.DagsterInstance, child, parent: dg.AssetKey, partition: str | None) -> bool:
    """True when the parent partition's latest materialisation is by a run of the child's own action.

    The runs of one ``interviewsim run`` go side by side, recording what its worker process writes
    (``launch._execute_with_worker``): a child partition can be recorded before its parent's run has
    stored the parent's. The parent's version then comes after the child's, yet it is the one the
    worker made the child from."""
    from .action_worker import WORKER_TAG

    latest, _ = _latest(instance, parent, partition)
    if latest is None or not child.run_id or not latest.run_id:
        return False

    def action(run_id: str) -> str:
        run = instance.get_run_by_id(run_id)
        return (run.tags.get(WORKER_TAG) or "").partition("/")[0] if run is not None else ""

    mine = action(child.run_id)
    return bool(mine) and mine == action(latest.run_id)


def narrow(spec, partitions: Sequence[str | None], graph, instance: dg.DagsterInstance,
           methods: Sequence[str], split_versions: dict[str, str] | None = None,
           rerun: Mapping[dg.AssetKey, Collection[str | None]] | None = None, data_root=None) -> list:
    """``spec`` (a ``launch.RunSpec``) cut down to its outdated cells: ``[]`` when nothing is outdated.

    An asset downstream of an outdated asset of the same run is outdated for that partition too (its
    input is about to be rewritten). ``rerun``: the partitions of each asset that earlier runs of the
    same action will make (runs side by side are narrowed before any starts): a partition reading
    one of them is outdated too.

    Nothing up to date is rewritten (issue 30: adding a method re-made every up-to-date partition of
    the range from the cache, a new materialisation event each). The partitions outdated for the same
    assets are covered exactly by as few rectangular ranges as ``_rectangles`` finds: adding a method
    for every personality is one run over that method, a new personality one run over its methods.
    """
    keys = list(spec.assets)  # topological order
    newest = NewestEvents(instance)
    stale_at: dict[str | None, tuple[dg.AssetKey, ...]] = {}
    for p in partitions:
        stale: list[dg.AssetKey] = []
        for k in keys:
            node = graph.get(k)
            upstream_rerun = any(parent in stale or _remade(rerun, graph, node, parent, p, instance, methods)
                                 for parent in node.parent_keys)
            if upstream_rerun or not is_up_to_date(graph, instance, k, p, methods, split_versions, data_root, newest):
                stale.append(k)
        if stale:
            stale_at[p] = tuple(stale)
    if spec.start is None:
        return [replace(spec, assets=stale_at[None])] if stale_at else []
    by_assets: dict[tuple[dg.AssetKey, ...], list[str]] = {}
    for p, assets in stale_at.items():
        by_assets.setdefault(assets, []).append(p)
    pdef = graph.get(keys[0]).partitions_def
    registered = list(instance.get_dynamic_partitions(PERSONALITY))
    return [replace(spec, assets=assets, start=a, end=b)
            for assets, parts in by_assets.items() for a, b in _rectangles(pdef, parts, registered, methods)]


def _remade(rerun, graph, node, parent: dg.AssetKey, partition: str | None, instance, methods) -> bool:
    """True when an earlier run of the action re-makes a partition of ``parent`` that ``partition`` reads."""
    made = (rerun or {}).get(parent)
    if not made:
        return False
    reads = parent_partitions(node.partitions_def, graph.get(parent).partitions_def, partition, instance, methods)
    return any(pp in made for pp in reads)


def _rectangles(pdef, keys: Sequence[str], registered: Sequence[str], methods: Sequence[str]) -> list[tuple[str, str]]:
    """(first, last) partition ranges that cover exactly ``keys``: runs of consecutive personalities, and for
    P x M keys, of personalities outdated in the same methods times runs of consecutive methods."""
    if not isinstance(pdef, dg.MultiPartitionsDefinition):
        return contiguous_blocks(keys, registered)
    methods_of: dict[str, list[str]] = {}
    for k in keys:
        dims = dims_of(pdef, k)
        methods_of.setdefault(dims[PERSONALITY], []).append(dims[METHOD])
    people_of: dict[tuple[str, ...], list[str]] = {}
    for person, ms in methods_of.items():
        people_of.setdefault(tuple(sorted(ms, key=methods.index)), []).append(person)
    return [(str(pxm_key(pa, ma)), str(pxm_key(pb, mb)))
            for ms, people in people_of.items()
            for pa, pb in contiguous_blocks(people, registered)
            for ma, mb in contiguous_blocks(ms, methods)]


def contiguous_blocks(selected: Sequence[str], order: Sequence[str]) -> list[tuple[str, str]]:
    """Runs of consecutive keys (in ``order``) covering ``selected``, as (first, last) pairs."""
    pos = {k: i for i, k in enumerate(order)}
    idx = sorted(pos[k] for k in set(selected))
    blocks: list[tuple[str, str]] = []
    for i in idx:
        if blocks and pos[blocks[-1][1]] == i - 1:
            blocks[-1] = (blocks[-1][0], order[i])
        else:
            blocks.append((order[i], order[i]))
    return blocks


def spec_partitions(spec, graph, personalities: Sequence[str], methods: Sequence[str]) -> list[str | None]:
    """Every partition key a ``RunSpec`` covers (its range spelled out), in run order."""
    if spec.start is None:
        return [None]

    def span(order: Sequence[str], a: str, b: str) -> list[str]:
        i, j = order.index(a), order.index(b)
        return list(order[i:j + 1])

    pdef = graph.get(spec.assets[0]).partitions_def
    first, last = dims_of(pdef, spec.start), dims_of(pdef, spec.end or spec.start)
    people = span(personalities, first[PERSONALITY], last[PERSONALITY])
    if METHOD not in first:
        return people
    return [str(pxm_key(p, m)) for p in people for m in span(methods, first[METHOD], last[METHOD])]


def configured_methods(graph) -> list[str]:
    """The method partition keys, in configured order (empty if no P x M asset is defined)."""
    for key in graph.get_all_asset_keys():
        pdef = graph.get(key).partitions_def
        if isinstance(pdef, dg.MultiPartitionsDefinition):
            return list(pdef.get_partitions_def_for_dimension(METHOD).get_partition_keys())
    return []
