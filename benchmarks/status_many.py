"""`hudi-cdc status` and `hudi-cdc report` over many small tables (issue 38, item 6): whole processes timed.

The tables are made cheaply: two seed tables (CoW and MoR, a bootstrap and one `stream --all --once`
round each, so two commits) are written by hudi-cdc, then copied with their landing folders to
--tables tables (a copy is a real Hudi table: its own timeline, files and landing); one table in five gets
a landed file its table has not applied, so `status` has tables behind to list first.

    python -m benchmarks.status_many --tables 200 [--work /work/bench-data/status-many] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import yaml  # noqa: E402

from benchmarks import procs, report, stream  # noqa: E402
from benchmarks.multi_table import land, land_changes  # noqa: E402

TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


def progress(msg: str) -> None:
    print(f"[status-many {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _doc(work: Path, tables: dict[str, str]) -> dict:
    return {"pipeline": "bench", "source": {"root": str(work / "landing")},
            "lake": {"root": str(work / "lake"), "hive_database": "bench"},
            "tables": {n: {"topic": f"bench.public.{n}", "record_key": stream.KEY, "ordering_field": "__lsn",
                           "partition_field": stream.PARTITION, "table_types": [tt], "deletes": "hard"}
                       for n, tt in tables.items()}}


def make_tables(work: Path, n: int, rows: int) -> Path:
    """`n` tables, half CoW half MoR, copied from two seeds written by hudi-cdc; the pipeline file."""
    seeds = {"seed_cow": "COPY_ON_WRITE", "seed_mor": "MERGE_ON_READ"}
    cfg = work / "hudi-cdc.yaml"
    work.mkdir(parents=True, exist_ok=True)
    cfg.write_text(yaml.safe_dump(_doc(work, seeds), sort_keys=False))
    srcs = land(work, list(seeds), rows)
    procs.run(procs.hudi_cdc("--config", str(cfg), "bootstrap"), work / "logs" / "seed-bootstrap.log")
    land_changes(work, list(seeds), srcs, max(1, rows // 10))
    procs.run(procs.hudi_cdc("--config", str(cfg), "stream", "--all", "--once"), work / "logs" / "seed-round.log")
    tables: dict[str, str] = {}
    for i in range(n):
        seed = "seed_cow" if i % 2 == 0 else "seed_mor"
        name, tt = f"t{i:03d}", seeds[seed]
        suffix = "cow" if tt == "COPY_ON_WRITE" else "mor"
        shutil.copytree(work / "lake" / f"{seed}_{suffix}", work / "lake" / f"{name}_{suffix}")
        shutil.copytree(work / "landing" / f"bench.public.{seed}", work / "landing" / f"bench.public.{name}")
        tables[name] = tt
    behind = [f"t{i:03d}" for i in range(0, n, 5)]
    for name in behind:  # a landed file the table has not applied
        lnd = stream.Landing(work / "landing", f"bench.public.{name}")
        lnd.land(srcs[0].changes(5)[0])
    cfg.write_text(yaml.safe_dump(_doc(work, tables), sort_keys=False))
    return cfg


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--rows", type=int, default=200, help="rows of each seed table")
    ap.add_argument("--work", default="/work/bench-data/status-many")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    work = Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    cfg = make_tables(work, args.tables, args.rows)
    res: dict = {"command": "python -m benchmarks.status_many " + " ".join(argv if argv is not None else sys.argv[1:]),
                 "machine": report.machine(), "tables": args.tables}
    m = procs.run(procs.hudi_cdc("--config", str(cfg), "status", "-o", "json"), work / "logs" / "status.log",
                  check=False)
    out = subprocess.run(procs.hudi_cdc("--config", str(cfg), "status", "-o", "json"), capture_output=True,
                         text=True, env=procs.env())
    rows = json.loads(out.stdout)
    res["status"] = {"s": round(m.seconds, 2), "rows": len(rows), "exit": m.rc,
                     "first": [(r["table"], r["behind_seconds"]) for r in rows[:3]]}
    progress(f"status over {args.tables} tables: {res['status']}")
    m = procs.run(procs.hudi_cdc("--config", str(cfg), "report", "--out", str(work / "report")),
                  work / "logs" / "report.log")
    res["report"] = {"s": round(m.seconds, 2)}
    progress(f"report over {args.tables} tables: {res['report']}")
    return report.finish(res, args.out)


if __name__ == "__main__":
    sys.exit(main())
