"""The partition design at the paper's scale with several generators, against Dagster's limits (issue 44).

A generator after the first is a key inside the method dimension (``<label>/<method>``), so the personality x
method assets of 1,000 personalities x (the 11 default methods + the 3 calibration methods) x 4 generators have
1,000 x (14 + 3 x 11) = 47,000 partitions each, under the 100,000 per asset Dagster's documentation recommends
(above it "slower load times in the UI"). This measures what that costs where a researcher sees it, on a real
``interviewsim ui`` (webserver + daemon) over a fresh instance with the 1,000 personalities registered and nothing
materialised, each read through GraphQL as its page sends it (the slowest of ``ROUNDS``, the first one cold):

- the asset graph (every asset node with its dependencies and partition definition);
- a P x M asset's partition counts (the Catalog's "% filled"), and its Partitions tab (the partition keys of both
  dimensions and the materialisation status ranges);
- the job page's partition set (every partition name of the P x M job);

each beside the same with one generator (14,000 partitions), and the code location's definitions built in
process. Target: each read at most ``TARGET_S`` (2 s, issue 43's budget for a page).

Usage: ``python -m benchmarks.bench_partitions [--personalities N] [--generators G]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 2.0
ROUNDS = 3
GENERATORS = ("offline/extractive", "offline/terse", "offline/third", "offline/fourth")

GRAPH = """{ assetNodes { assetKey { path } dependencyKeys { path } isPartitioned
  partitionDefinition { type dimensionTypes { name } } } }"""
STATS = """query($k: AssetKeyInput!) { assetNodeOrError(assetKey: $k) { ... on AssetNode {
  partitionStats { numMaterialized numPartitions numFailed numMaterializing } } } }"""
TAB = """query($k: AssetKeyInput!) { assetNodeOrError(assetKey: $k) { ... on AssetNode {
  partitionKeysByDimension { name partitionKeys }
  assetPartitionStatuses { __typename
    ... on MultiPartitionStatuses { primaryDimensionName ranges { primaryDimStartKey primaryDimEndKey } } } } } }"""
PARTITION_SET = """query($r: String!, $l: String!, $n: String!) {
  partitionSetOrError(repositorySelector: {repositoryName: $r, repositoryLocationName: $l}, partitionSetName: $n) {
    __typename ... on PartitionSet { partitionsOrError { ... on Partitions { results { name } } } } } }"""


def _config(work: Path, corpus: Path, generators: int) -> dict[str, str]:
    """An offline config (nothing is called) and the environment of a fresh instance under ``work``."""
    import yaml

    from interviewsim_core.strategies import DEFAULT_METHODS
    from interviewsim_core.strategies.calibration import CALIBRATION_METHODS

    offline = {"model": GENERATORS[0]}
    (work / "interviewsim.yaml").write_text(yaml.safe_dump({
        "corpus": str(corpus), "data_root": str(work / "data"), "judges": [offline], "builder": offline,
        "premise_judge": offline, "generators": [{"model": g} for g in GENERATORS[:generators]],
        "methods": [*DEFAULT_METHODS, *CALIBRATION_METHODS]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTERVIEWSIM_")}
    env.update(DAGSTER_HOME=str(work / "home"), INTERVIEWSIM_CONFIG=str(work / "interviewsim.yaml"))
    (work / "home").mkdir(parents=True, exist_ok=True)
    return env


def _timed(ui, query: str, variables: dict | None = None) -> tuple[float, dict]:
    """The slowest of ``ROUNDS`` reads (the first, cold, usually) and the answer."""
    times, data = [], {}
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        data = ui.gql(query, variables, timeout_s=600)
        times.append(time.perf_counter() - t0)
    return max(times), data


def measure(corpus: Path, generators: int) -> dict:
    """Register the corpus on a fresh instance, start ``interviewsim ui``, time each page's read."""
    sys.path.insert(0, str(REPO / "tests" / "dagster"))
    from ui_harness import LOCATION, DagsterUI  # the tests' harness: start, GraphQL, stop by process group

    from interviewsim_dagster.launch import PERSONALITY_METHOD_JOB

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = _config(work, corpus, generators)
        exe = str(Path(sys.executable).with_name("interviewsim"))
        subprocess.run([exe, "register", "--corpus", str(corpus)], env=env, cwd=work, check=True,
                       capture_output=True, timeout=1800)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from interviewsim_dagster.definitions import defs; "
                        "defs.resolve_asset_graph()"], env=env, cwd=work, check=True, timeout=600)
        load_s = time.perf_counter() - t0
        with DagsterUI(env, cwd=work, log=work / "ui.log") as ui:
            graph_s, _ = _timed(ui, GRAPH)
            key = {"k": {"path": ["generations"]}}
            stats_s, stats = _timed(ui, STATS, key)
            tab_s, tab = _timed(ui, TAB, key)
            repo = ui.gql("{ repositoriesOrError { ... on RepositoryConnection { nodes { name } } } }")
            name = repo["repositoriesOrError"]["nodes"][0]["name"]
            set_s, pset = _timed(ui, PARTITION_SET, {"r": name, "l": LOCATION,
                                                     "n": f"{PERSONALITY_METHOD_JOB}_partition_set"})
    node = tab["assetNodeOrError"]
    dims = {d["name"]: len(d["partitionKeys"]) for d in node["partitionKeysByDimension"]}
    names = pset["partitionSetOrError"]["partitionsOrError"]["results"]
    return {"partitions": stats["assetNodeOrError"]["partitionStats"]["numPartitions"], "dims": dims,
            "job_partitions": len(names), "definitions_s": load_s, "graph_s": graph_s, "stats_s": stats_s,
            "tab_s": tab_s, "partition_set_s": set_s}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--personalities", type=int, default=1000)
    ap.add_argument("--generators", type=int, default=len(GENERATORS))
    args = ap.parse_args(argv)
    from benchmarks.bench_plan import small_corpus

    print(f"load average: {os.getloadavg()[0]:.1f} (2 cores shared); the slowest of {ROUNDS} reads each")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = small_corpus(Path(tmp) / "corpus", args.personalities)
        rows = {g: measure(corpus, g) for g in (1, args.generators)}
    ok = True
    print(f"{args.personalities:,} personalities; default + calibration methods; offline models, nothing materialised")
    print(f"  {'generators':<11}{'partitions':>11}  {'dimensions':<28}{'definitions':>12}{'graph':>8}"
          f"{'% filled':>10}{'Partitions tab':>16}{'job partition set':>19}")
    for g, r in rows.items():
        dims = ", ".join(f"{k} {v:,}" for k, v in sorted(r["dims"].items()))
        print(f"  {g:<11}{r['partitions']:>11,}  {dims:<28}{r['definitions_s']:>11.1f}s{r['graph_s']:>7.2f}s"
              f"{r['stats_s']:>9.2f}s{r['tab_s']:>15.2f}s{r['partition_set_s']:>18.2f}s")
    big, one = rows[args.generators], rows[1]
    for what in ("graph_s", "stats_s", "tab_s", "partition_set_s"):
        passed = big[what] <= TARGET_S
        ok &= passed
        print(f"{what.removesuffix('_s')}: {big[what]:.2f} s with {args.generators} generators ({big[what] / max(one[what], 1e-9):.2f}x "
              f"one generator's; target <= {TARGET_S:g} s, ratio {big[what] / TARGET_S:.2f}) {'PASS' if passed else 'FAIL'}")
    print(f"bench_partitions {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
