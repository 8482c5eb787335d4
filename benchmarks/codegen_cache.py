"""Spark's generated-code cache with many tables of different columns (issue 38).

Spark compiles each query's generated Java code and keeps the classes in a cache of
`spark.sql.codegen.cache.maxEntries` entries (100 by default, fixed when the application starts). A table's
rounds generate classes of their own, since the code follows the table's column types. Here --tables MoR tables
(benchmarks/stream.py's generator, each with three extra nullable columns of its own types and 0-3 text columns, so no
two tables have the same columns) are bootstrapped in one warm session, then --passes passes each run one round of
--changes events in every table in turn (`run_targets`, hudi-cdc's whole round). Per pass: the classes Spark
compiled (its CodegenMetrics), wall and CPU seconds per round (the driver JVM and this process).

Each variant runs in its own process (the setting is static): `hudi-cdc` with the cache hudi-cdc renders for
--tables table jobs (common/spark_conf.codegen_cache_conf), `spark` with Spark's default of 100. Medians count from
the third pass (each table has run twice by then).

    python -m benchmarks.codegen_cache [--tables 10] [--passes 6] [--rows 2000] [--changes 20] [--out F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks import procs, report, stream  # noqa: E402

TYPES = ("int", "long", "double", "boolean", "string", "float")
VARIANTS = ("hudi-cdc", "spark")


def table_schema(i: int) -> dict:
    """benchmarks/stream.py's schema with table i's own extra columns (all nullable, left null)."""
    extra = [{"name": f"x{j}", "type": ["null", TYPES[(i // (len(TYPES) ** j) + j) % len(TYPES)]], "default": None}
             for j in range(3)]
    extra += [{"name": f"y{j}", "type": ["null", "string"], "default": None} for j in range(i % 4)]
    fields = stream.SCHEMA["fields"]
    return {**stream.SCHEMA, "fields": fields[:5] + extra + fields[5:]}


def measure(args) -> dict:
    from benchmarks import driver_commit as dc
    from benchmarks.lake import Variant
    from hudi_cdc.common.spark_conf import codegen_cache_conf

    work = procs.fresh_work(args.work)
    stream.SNAPSHOT_LSN = 2**32 + 1_000  # LSNs above 2^31, as capture's are
    tables = []
    for i in range(args.tables):
        landing = stream.Landing(work / f"t{i}" / "landing")
        landing.schema = table_schema(i)
        src = stream.Stream(args.rows, seed=i, next_lsn=stream.SNAPSHOT_LSN + 1)
        landing.land_many(src.snapshot(), 1)
        v = Variant(work / f"t{i}" / "mor", landing.root, "MERGE_ON_READ", compaction_delta_commits=1000).write()
        tables.append((landing, src, dc.targets(v)))
    conf = codegen_cache_conf(args.tables) if args.variant == "hudi-cdc" else {}
    spark = dc.session(work, conf)
    from hudi_cdc.common import py4j_lookups
    from hudi_cdc.jobs.stream.main import run_targets

    py4j_lookups.install_for(spark)
    clock = dc.Clock(spark)
    metrics = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics
    for _, _, ts in tables:
        run_targets(spark, [ts["BULK_INSERT"]], lambda m: None)
    passes = []
    for _ in range(args.passes):
        n0, s, c = metrics.METRIC_SOURCE_CODE_SIZE().getCount(), time.monotonic(), clock.cpu()
        for landing, src, ts in tables:
            landing.land(src.changes(args.changes)[0])
            run_targets(spark, [ts["UPSERT"]], lambda m: None)
        k = len(tables)
        passes.append({"compiled_per_round": round((metrics.METRIC_SOURCE_CODE_SIZE().getCount() - n0) / k, 1),
                       "wall_s_per_round": round((time.monotonic() - s) / k, 2),
                       "cpu_s_per_round": round((clock.cpu() - c) / k, 2)})
        print(json.dumps(passes[-1]), file=sys.stderr, flush=True)
    size = metrics.METRIC_GENERATED_CLASS_BYTECODE_SIZE().getSnapshot()
    steady = passes[2:] or passes
    return {"variant": args.variant, "max_entries": conf.get("spark.sql.codegen.cache.maxEntries", "100"),
            "passes": passes, "class_bytecode_mean_bytes": round(size.getMean()),
            **{f"median_{k}": statistics.median(p[k] for p in steady) for k in passes[0]}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=10)
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--work", default="/tmp/hudi-cdc-bench-codegen")
    ap.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # one variant, in this process
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.variant:
        print(json.dumps(measure(args)))
        return 0
    given = argv if argv is not None else sys.argv[1:]
    res: dict = {"command": "python -m benchmarks.codegen_cache " + " ".join(given), "machine": report.machine(),
                 "tables": args.tables, "variants": []}
    for variant in VARIANTS:
        out = subprocess.run([sys.executable, "-m", "benchmarks.codegen_cache", *given, "--variant", variant],
                             stdout=subprocess.PIPE, text=True, check=True, env=procs.env())
        res["variants"].append(json.loads(out.stdout.strip().splitlines()[-1]))
        report.save(res, args.out)
    return report.finish(res, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
