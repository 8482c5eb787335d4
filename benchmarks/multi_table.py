"""Many tables under one `hudi-cdc stream --all` vs one table alone: the same backlog of change events
drained (a) spread over --tables MoR tables by one `stream --all --once` process and (b) into one
table as large as the --tables together by `stream --table --once`; events/s of each (whole processes,
JVM start included), the ratio (target: >= 0.8), and the peak memory of the --all process tree
(target: <= 4 GB; PSS, procs.PeakRss).

    python -m benchmarks.multi_table --tables 20 --rows-per-table 50000 --changes 200000
        [--work /work/bench-data/multi] [--out results.json]

`stream --all --once` runs the tables' rounds side by side, at most `stream.max_parallel_rounds` at once.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import yaml  # noqa: E402

from benchmarks import procs, report, stream  # noqa: E402


def progress(msg: str) -> None:
    print(f"[multi {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pipeline(work: Path, names: list[str], stream_settings: dict | None = None,
             hudi_options: dict | None = None, spark_conf: dict | None = None,
             compaction_delta_commits: int | None = None) -> Path:
    doc: dict = {"pipeline": "bench", "source": {"root": str(work / "landing")},
           "lake": {"root": str(work / "lake"), "hive_database": "bench"},
           "tables": {n: {"topic": f"bench.public.{n}", "record_key": stream.KEY, "ordering_field": "__lsn",
                          "partition_field": stream.PARTITION, "table_types": ["MERGE_ON_READ"],
                          "deletes": "hard", "hudi_options": dict(hudi_options or {})} for n in names}}
    if compaction_delta_commits:
        for table in doc["tables"].values():
            table["compaction_delta_commits"] = compaction_delta_commits
    if stream_settings:
        doc["stream"] = stream_settings
    if spark_conf:
        doc["spark"] = {"conf": dict(spark_conf)}
    work.mkdir(parents=True, exist_ok=True)
    (work / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return work / "hudi-cdc.yaml"


def land(work: Path, names: list[str], rows: int) -> list[stream.Stream]:
    """Each table's snapshot (one file)."""
    srcs = []
    for i, n in enumerate(names):
        src = stream.Stream(rows, seed=100 + i)
        stream.Landing(work / "landing", f"bench.public.{n}").land_snapshot(src, 1)
        srcs.append(src)
    return srcs


def land_changes(work: Path, names: list[str], srcs: list[stream.Stream], changes: int) -> int:
    """Each table's change backlog (one file per 10,000 events)."""
    total = 0
    for n, src in zip(names, srcs, strict=True):
        events, _ = src.changes(changes)
        lnd = stream.Landing(work / "landing", f"bench.public.{n}")
        for i in range(0, len(events), 10_000):
            lnd.land(events[i:i + 10_000])
        total += len(events)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--rows-per-table", type=int, default=50_000)
    ap.add_argument("--changes", type=int, default=200_000, help="backlog of change events, in all")
    ap.add_argument("--all-args", default="stream --all --once", help="the --all command (after --config)")
    ap.add_argument("--max-parallel-rounds", type=int, help="stream.max_parallel_rounds (default: the pipeline's)")
    ap.add_argument("--hudi-options", default="{}", help="JSON: hudi_options of every table (both runs)")
    ap.add_argument("--spark-conf", default="{}", help='JSON: spark.conf of both pipelines, e.g. '
                    '\'{"spark.eventLog.enabled": "true", "spark.eventLog.dir": "/tmp/ev"}\'')
    ap.add_argument("--work", default="/work/bench-data/multi")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    work = Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    names = [f"customers_t{i:02d}" for i in range(args.tables)]
    res: dict = {"command": "python -m benchmarks.multi_table " + " ".join(argv if argv is not None else sys.argv[1:]),
                 "machine": report.machine(), "tables": args.tables, "rows_per_table": args.rows_per_table}
    # (a) --tables tables, the backlog spread over them
    settings = {"max_parallel_rounds": args.max_parallel_rounds} if args.max_parallel_rounds else None
    opts = json.loads(args.hudi_options)
    conf = json.loads(args.spark_conf)
    many = pipeline(work / "many", names, settings, opts, conf)
    srcs = land(work / "many", names, args.rows_per_table)
    m = procs.run(procs.hudi_cdc("--config", str(many), "bootstrap"), work / "logs" / "many-bootstrap.log")
    progress(f"bootstrap of {args.tables} tables: {m.seconds:.1f}s, peak {m.peak_rss_mb:.0f} MB")
    res["bootstrap_many"] = {"s": round(m.seconds, 1), "peak_rss_mb": round(m.peak_rss_mb),
                             "peak_pss_mb": m.peak_pss_mb}
    n_many = land_changes(work / "many", names, srcs, args.changes // args.tables)
    m = procs.run(procs.hudi_cdc("--config", str(many), *args.all_args.split()), work / "logs" / "many-stream.log",
                  timeout=7200)
    res["many"] = {"events": n_many, "s": round(m.seconds, 1), "events_per_s": round(n_many / m.seconds),
                   "peak_rss_mb": round(m.peak_rss_mb), "peak_pss_mb": m.peak_pss_mb,
                   "load_avg": m.load_avg, "cpu_s": m.cpu_s}
    progress(f"{args.tables} tables: {res['many']}")
    # (b) one table holding as many rows as the --tables together, the same backlog
    one = pipeline(work / "one", names[:1], settings, opts, conf)
    src = land(work / "one", names[:1], args.rows_per_table * args.tables)
    procs.run(procs.hudi_cdc("--config", str(one), "bootstrap"), work / "logs" / "one-bootstrap.log")
    n_one = land_changes(work / "one", names[:1], src, n_many)
    m = procs.run(procs.hudi_cdc("--config", str(one), "stream", "--table", names[0], "--type", "mor", "--once"),
                  work / "logs" / "one-stream.log", timeout=7200)
    res["one"] = {"events": n_one, "s": round(m.seconds, 1), "events_per_s": round(n_one / m.seconds),
                  "peak_rss_mb": round(m.peak_rss_mb), "peak_pss_mb": m.peak_pss_mb,
                  "load_avg": m.load_avg, "cpu_s": m.cpu_s}
    progress(f"one table: {res['one']}")
    res["ratio_many_over_one"] = round(res["many"]["events_per_s"] / res["one"]["events_per_s"], 2)
    return report.finish(res, args.out)


if __name__ == "__main__":
    sys.exit(main())
