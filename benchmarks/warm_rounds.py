"""What a small round costs in a long-running `stream --all` (issue 38): CPU seconds per round once the
JVM is warm, the rounds a minute, and the round's phases, for variants of the Spark / Hudi settings
measured in one run (alternated, so the machine's load falls on each alike).

    python -m benchmarks.warm_rounds [--tables 8] [--rows 5000] [--changes 20] [--every 5] [--minutes 3]
        [--warmup 60] [--repeat 2] [--variant NAME=JSON ...] [--work /work/bench-data/warm-rounds] [--out F]

--tables MoR tables of --rows rows (benchmarks/stream.py's generator, each its own seed) are bootstrapped,
then one continuous `stream --all` runs while --changes change events land in every table each --every
seconds. After --warmup seconds, the process tree's CPU seconds and the committed rounds are counted for
--minutes. A variant is a JSON object of `spark.conf` entries (e.g. the driver JVM's options) and
`hoodie.*` writer options; `default` (the settings hudi-cdc renders) always runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks import procs, report  # noqa: E402
from benchmarks.multi_table import land, land_changes, pipeline  # noqa: E402
from benchmarks.scenarios import PHASES  # noqa: E402


def progress(msg: str) -> None:
    print(f"[warm {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _committed(log: Path) -> list[str]:
    return [line for line in log.read_text(errors="replace").splitlines() if ": committed " in line]


def _phases(lines: list[str]) -> dict[str, float]:
    """The median seconds of each phase over the committed rounds' log lines."""
    seen: dict[str, list[float]] = {}
    for line in lines:
        m = PHASES.search(line)  # the streamer's committed line (scenarios.round_phases sums them)
        if m:
            for part in m.group("phases").split(", "):
                name, secs, _ = part.rsplit(" ", 2)
                seen.setdefault(name, []).append(float(secs))
    return {k: round(statistics.median(v), 2) for k, v in seen.items()}


def one(work: Path, args, name: str, variant: dict[str, str]) -> dict:
    names = [f"t{i:02d}" for i in range(args.tables)]
    conf = {k: v for k, v in variant.items() if not k.startswith("hoodie.")}
    hudi = {k: v for k, v in variant.items() if k.startswith("hoodie.")}
    cfg = pipeline(work, names, {"min_sync_interval_seconds": 1}, hudi, conf or None)
    srcs = land(work, names, args.rows)
    procs.run(procs.hudi_cdc("--config", str(cfg), "bootstrap"), work / "bootstrap.log")
    log = work / "stream.log"
    proc, fh = procs.start(procs.hudi_cdc("--config", str(cfg), "stream", "--all"), log, procs.env())
    try:
        started = time.monotonic()
        cpu0 = rounds0 = None
        t0 = 0.0
        while time.monotonic() - started < args.warmup + args.minutes * 60:
            land_changes(work, names, srcs, args.changes)
            if cpu0 is None and time.monotonic() - started >= args.warmup:
                cpu0, rounds0, t0 = procs.cpu_seconds(proc.pid), len(_committed(log)), time.monotonic()
            time.sleep(args.every)
            if proc.poll() is not None:
                raise RuntimeError(f"stream --all exited {proc.returncode}; log {log}")
        cpu1, lines, t1 = procs.cpu_seconds(proc.pid), _committed(log), time.monotonic()
    finally:
        procs.stop(proc)
        fh.close()
    assert cpu0 is not None and rounds0 is not None
    rounds = len(lines) - rounds0
    cpu = cpu1 - cpu0
    res = {"variant": name, "settings": variant, "rounds": rounds, "seconds": round(t1 - t0, 1),
           "rounds_per_minute": round(rounds * 60 / (t1 - t0), 2), "cpu_s": round(cpu, 1),
           "cpu_s_per_round": round(cpu / rounds, 2) if rounds else None, "phases_median": _phases(lines[rounds0:]),
           "load": round(os.getloadavg()[0], 2)}
    progress(json.dumps(res))
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=8)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--every", type=float, default=5.0)
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=JSON")
    ap.add_argument("--work", default="/work/bench-data/warm-rounds")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    variants: dict[str, dict[str, str]] = {"default": {}}
    for v in args.variant:
        name, _, js = v.partition("=")
        variants[name] = {str(k): str(x) for k, x in json.loads(js).items()}
    runs = []
    for i in range(args.repeat):
        for name, variant in variants.items():
            progress(f"{name}, run {i + 1} of {args.repeat}")
            runs.append(one(procs.fresh_work(args.work), args, name, variant))
    summary = {name: {"cpu_s_per_round": [r["cpu_s_per_round"] for r in runs if r["variant"] == name],
                      "rounds_per_minute": [r["rounds_per_minute"] for r in runs if r["variant"] == name]}
               for name in variants}
    res = {"command": "python -m benchmarks.warm_rounds " + " ".join(argv if argv is not None else sys.argv[1:]),
           "machine": report.machine(), "summary": summary, "runs": runs}
    return report.finish(res, args.out)


if __name__ == "__main__":
    sys.exit(main())
