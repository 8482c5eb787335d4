"""The Spark jobs of one small round (issue 38, item 2): which job a round of a few events runs, where it
is called from and how long it took, from Spark's event log of a whole `stream --once` process.

    python -m benchmarks.round_jobs [--rows 5000] [--changes 20] [--type mor] [--hudi-options JSON]
        [--work /work/bench-data/round-jobs]

A table of --rows rows (benchmarks/stream.py's generator) is bootstrapped, --changes change events land,
and `stream --table small --once` runs with `spark.eventLog.enabled`; every SparkListenerJobStart/End pair
is listed with its call site (`?`: a job Hudi started from the JVM, no Python call site), its tasks and their
deserialization and run CPU seconds (SparkListenerTaskEnd's metrics). --hudi-options: the table's
`hudi_options` (e.g. `{"hoodie.streamer.hudi_cdc.small.round.bytes": "0"}` for the round in the job's session).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import yaml  # noqa: E402

from benchmarks import procs, report  # noqa: E402
from benchmarks.multi_table import land, land_changes, pipeline  # noqa: E402


def jobs_of(event_log: Path) -> list[dict]:
    starts: dict[int, tuple[int, str, int]] = {}
    stage_job: dict[int, int] = {}
    tasks: dict[int, list[float]] = {}  # job -> [tasks, deserialize CPU s, run CPU s]
    out = []
    for line in event_log.read_text().splitlines():
        e = json.loads(line)
        if e["Event"] == "SparkListenerTaskEnd" and e.get("Stage ID") in stage_job:
            m = e.get("Task Metrics") or {}
            t = tasks.setdefault(stage_job[e["Stage ID"]], [0, 0.0, 0.0])
            t[0] += 1
            t[1] += m.get("Executor Deserialize CPU Time", 0) / 1e9
            t[2] += m.get("Executor CPU Time", 0) / 1e9
        if e["Event"] == "SparkListenerJobStart":
            stage_job.update({s: e["Job ID"] for s in e.get("Stage IDs", [])})
            props = e.get("Properties", {})
            stages = len(e.get("Stage Infos", []))
            starts[e["Job ID"]] = (e["Submission Time"], props.get("callSite.short", "?"), stages)
        elif e["Event"] == "SparkListenerJobEnd":
            at, site, stages = starts[e["Job ID"]]
            n, deser, cpu = tasks.get(e["Job ID"], [0, 0.0, 0.0])
            out.append({"job": e["Job ID"], "s": round((e["Completion Time"] - at) / 1000, 3), "stages": stages,
                        "tasks": n, "deserialize_cpu_s": round(deser, 3), "task_cpu_s": round(cpu, 3),
                        "call_site": site.replace(str(Path(__file__).resolve().parents[1]) + "/", "")})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--type", choices=["cow", "mor"], default="mor")
    ap.add_argument("--hudi-options", default="{}", help="JSON: the table's hudi_options")
    ap.add_argument("--work", default="/work/bench-data/round-jobs")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    work = Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    events = work / "events"
    events.mkdir(parents=True)
    cfg = pipeline(work, ["small"], {"min_sync_interval_seconds": 1}, json.loads(args.hudi_options) or None,
                   {"spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file://{events}"})
    doc = yaml.safe_load(cfg.read_text())
    doc["tables"]["small"]["table_types"] = [{"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}[args.type]]
    cfg.write_text(yaml.safe_dump(doc))
    srcs = land(work, ["small"], args.rows)
    procs.run(procs.hudi_cdc("--config", str(cfg), "bootstrap"), work / "bootstrap.log")
    for f in events.iterdir():
        f.unlink()
    land_changes(work, ["small"], srcs, args.changes)
    m = procs.run(procs.hudi_cdc("--config", str(cfg), "stream", "--table", "small", "--type", args.type, "--once"),
                  work / "round.log")
    jobs = jobs_of(next(events.iterdir()))
    phases = [line.strip() for line in (work / "round.log").read_text().splitlines() if ": committed " in line]
    res = {"command": "python -m benchmarks.round_jobs " + " ".join(argv if argv is not None else sys.argv[1:]),
           "machine": report.machine(), "process_s": round(m.seconds, 1), "jobs": len(jobs),
           "seconds_in_jobs": round(sum(j["s"] for j in jobs), 2), "tasks": sum(j["tasks"] for j in jobs),
           "deserialize_cpu_s": round(sum(j["deserialize_cpu_s"] for j in jobs), 2),
           "task_cpu_s": round(sum(j["task_cpu_s"] for j in jobs), 2), "phases": phases[-1:], "each": jobs}
    return report.finish(res, args.out)


if __name__ == "__main__":
    sys.exit(main())
