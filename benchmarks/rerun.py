"""Measure again on tables a benchmark run kept (`python -m benchmarks.run ... --work W --keep`), without
generating or bootstrapping anything: the figures of benchmarks/results/2026-11-24-idle.md.

    python -m benchmarks.rerun rounds --work W [--runs 2] [--only "mor 1M,mor 10M,cow 1M,cow 10M"]
        [--hudi-options '{"hoodie.parquet.compression.codec": "snappy"}']
    python -m benchmarks.rerun bootstrap --work W --rows 10000000 [--what plain,cow,mor] [--hudi-options ...]
    python -m benchmarks.rerun read --table W/.../lake/customers_mor

- rounds: each kept table (the growth scenario's 1M tables, the main 10M ones) restored from its pristine copy,
  then the same landed change batch streamed (`stream --once`, a whole process); seconds, CPU seconds, peak
  RSS and the round's phases, in the order given, --runs times;
- bootstrap: plain Parquet (Spark), bootstrap CoW and MoR of the main landing's snapshot files only (the
  change batch landed after them is left out), each a whole process;
- read: in one Spark session, the columns a round's key lookup reads, through Hudi's snapshot read (a MoR
  table's logs merged) with and without its file group reader, and read-optimized (base files only).
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

from benchmarks import procs  # noqa: E402
from benchmarks.lake import Variant  # noqa: E402
from benchmarks.scenarios import plain_parquet_argv, round_phases, spark_env  # noqa: E402

MOR, COW = "MERGE_ON_READ", "COPY_ON_WRITE"
# the tables `benchmarks.run --growth-sizes 1000000,<rows> --growth-series LOCATED,LOCATED_MOR --keep` keeps
KEPT = {"mor 1M": ("growth-1000000/LOCATED_MOR", "growth-1000000/landing", MOR),
        "mor 10M": ("main/defaults-mor", "main/landing", MOR),
        "cow 1M": ("growth-1000000/LOCATED", "growth-1000000/landing", COW),
        "cow 10M": ("main/defaults-cow", "main/landing", COW)}
# what a round's key lookup reads (jobs/stream/located.py): Hudi's meta columns, key, partition, ordering
LOOKUP_COLUMNS = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                  "_hoodie_file_name", "customer_id", "country", "__lsn"]
READS = {"snapshot": {}, "snapshot, no file group reader": {"hoodie.file.group.reader.enabled": "false"},
         "read-optimized": {"hoodie.datasource.query.type": "read_optimized"}}


def measured(m: procs.Measured, log: Path | None = None) -> dict:
    out = {"s": round(m.seconds, 1), "cpu_s": m.cpu_s, "load_avg": m.load_avg, "peak_rss_mb": round(m.peak_rss_mb)}
    if log is not None:
        out["phases"] = round_phases(m.log)
    return out


def rounds(args) -> list[dict]:
    work, opts, out = Path(args.work), json.loads(args.hudi_options), []
    for run in range(args.runs):
        for name in args.only.split(","):
            sub, landing, kind = KEPT[name.strip()]
            v = Variant(work / sub, work / landing, kind, hudi_options=opts).write()
            try:
                v.restore()
                log = work / "logs" / f"rerun-{name.strip().replace(' ', '-')}-{run}.log"
                r = {"round": name.strip(), "run": run, **measured(v.stream_once(log), log)}
            finally:
                Variant(work / sub, work / landing, kind).write()  # the kept pipeline file as it was
            print(json.dumps(r), flush=True)
            out.append(r)
    return out


def bootstrap(args) -> list[dict]:
    work, opts, out = Path(args.work), json.loads(args.hudi_options), []
    topic = next((work / "main" / "landing").iterdir())
    snapshot = work / "rerun-bootstrap" / "landing" / topic.name / "partition=0"
    if snapshot.parent.parent.exists():
        shutil.rmtree(snapshot.parent.parent)
    snapshot.mkdir(parents=True)
    files = sorted((topic / "partition=0").glob("*.avro"))
    for f in files:  # the snapshot's files: offsets below --rows (the change batch comes after them)
        if int(f.stem.rsplit("+", 1)[1]) < args.rows:
            (snapshot / f.name).symlink_to(f)
    landing = snapshot.parent.parent
    for what in args.what.split(","):
        log = work / "logs" / f"rerun-bootstrap-{what}.log"
        if what == "plain":
            v = Variant(work / "rerun-bootstrap" / "cow", landing, COW).write()
            dest = work / "rerun-bootstrap" / "plain"
            shutil.rmtree(dest, ignore_errors=True)
            r = measured(procs.run(plain_parquet_argv(v, dest), log, extra_env=spark_env()))
            size = sum(p.stat().st_size for p in dest.rglob("*.parquet"))
        else:
            v = Variant(work / "rerun-bootstrap" / what, landing, COW if what == "cow" else MOR,
                        hudi_options=opts).write()
            r = measured(v.bootstrap(log), log)
            size = v.size_bytes()
        r = {"bootstrap": what, "mb": round(size / 2**20), **r}
        print(json.dumps(r), flush=True)
        out.append(r)
    return out


def read(args) -> list[dict]:
    from pyspark.sql import functions as F

    from hudi_cdc.query.spark_engine import start_session

    spark = start_session(app_name="bench-rerun-read")
    out = []
    for run in range(args.runs):
        for name, opts in READS.items():
            t = time.perf_counter()
            df = spark.read.format("hudi").options(**opts).load(args.table).select(*LOOKUP_COLUMNS)
            row = df.agg(F.count(F.lit(1)).alias("rows"), F.countDistinct("_hoodie_file_name").alias("files")).first()
            r = {"read": name, "run": run, "s": round(time.perf_counter() - t, 1), "rows": row["rows"],
                 "files": row["files"]}
            print(json.dumps(r), flush=True)
            out.append(r)
    spark.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what_to_run", required=True)
    r = sub.add_parser("rounds")
    r.add_argument("--work", required=True)
    r.add_argument("--runs", type=int, default=2)
    r.add_argument("--only", default=",".join(KEPT))
    r.add_argument("--hudi-options", default="{}")
    b = sub.add_parser("bootstrap")
    b.add_argument("--work", required=True)
    b.add_argument("--rows", type=int, required=True, help="the snapshot's rows (the files below this offset)")
    b.add_argument("--what", default="plain,cow,mor")
    b.add_argument("--hudi-options", default="{}")
    q = sub.add_parser("read")
    q.add_argument("--table", required=True)
    q.add_argument("--runs", type=int, default=2)
    args = ap.parse_args(argv)
    {"rounds": rounds, "bootstrap": bootstrap, "read": read}[args.what_to_run](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
