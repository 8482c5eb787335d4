"""Sustained throughput: a continuous `hudi-cdc stream` (no --once) on a MoR table, fed at fixed offered
rates by a feeder landing S3-sink Avro files; per rate, the freshness of every event (landed -> readable
in the lake, i.e. the commit that covers its file is complete) and whether the pipeline kept up.

    python -m benchmarks.sustained --rows 10000000 --rates 5000,10000,20000 [--step-seconds 90]
        [--from-pristine DIR] [--work DIR] [--out benchmarks/results/<date>-sustained.json]
        [--hudi-options JSON] [--compaction-delta-commits N]

The feeder pre-generates each step's change files (benchmarks/stream.py: updates, partition moves,
key-only deletes, inserts, redeliveries; one file per --file-seconds) while the stream is idle, then lands
them on schedule (write elsewhere, set the modification time, rename into the landing folder: what the
streamer's checkpoint needs), so generating events costs the measured pipeline no CPU. An event's source
time is the moment its file lands (an S3 sink with no flush delay); it is readable once a completed
deltacommit carries a checkpoint at or past its file's modification time (a monitor polls the timeline
every 0.2 s and reads the newest checkpoint with hudi-rs). A rate is sustained when every file is
committed within --drain-seconds after the last one landed and the p95 freshness is <= --p95-bound.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

if __package__ in (None, ""):  # python benchmarks/sustained.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import fastavro  # noqa: E402

from benchmarks import procs, report, stream  # noqa: E402
from benchmarks.lake import Variant  # noqa: E402

MOR = "MERGE_ON_READ"


def progress(msg: str) -> None:
    print(f"[sustained {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Monitor:
    """Watches a table's timeline: (wall time seen, newest checkpoint) for every new completed write."""

    def __init__(self, table: Path, poll: float = 0.2):
        from hudi_cdc.common.instants import completed_writes_of

        self._writes = completed_writes_of
        self.table, self.poll = table, poll
        self.seen: set[str] = set(self._names())
        self.commits: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _names(self) -> list[str]:
        tl = self.table / ".hoodie" / "timeline"
        try:
            return [i.file_name for i in self._writes(os.listdir(tl))]
        except FileNotFoundError:
            return []

    def _newest(self) -> tuple[str | None, str | None]:
        """The newest checkpoint and the newest source event time (hudi-cdc's commit metadata)."""
        from hudi_cdc.common import checkpoints, s3

        tl = s3.hudi_table_builder(str(self.table)).build().get_timeline()
        instants = list(tl.get_completed_commits()) + list(tl.get_completed_deltacommits())
        instants.sort(key=lambda i: i.timestamp, reverse=True)
        for inst in instants:
            extra = checkpoints.extra_metadata(json.loads(tl.get_instant_metadata_in_json(inst) or "{}"))
            cp = checkpoints.checkpoint_of(extra)
            if cp:
                return cp, extra.get(checkpoints.SOURCE_TS_KEY)
        return None, None

    def _loop(self) -> None:
        while not self._stop.is_set():
            new = [n for n in self._names() if n not in self.seen]
            if new:
                now = time.time()
                self.seen.update(new)
                cp, ts = self._newest()
                self.commits.append({"seen": now, "checkpoint_ms": int(cp) if cp else None,
                                     "source_ts_ms": int(ts) if ts else None, "instants": sorted(new)})
            self._stop.wait(self.poll)

    def covered_by_source_ts(self, ts_ms: int) -> float | None:
        """When the first commit whose newest source event time reaches ts_ms was seen."""
        for c in self.commits:
            if c["source_ts_ms"] is not None and c["source_ts_ms"] >= ts_ms:
                return c["seen"]
        return None

    def covered_at(self, mtime_ms: int) -> float | None:
        """When the first commit whose checkpoint reaches a file's modification time was seen."""
        for c in self.commits:
            if c["checkpoint_ms"] is not None and c["checkpoint_ms"] >= mtime_ms:
                return c["seen"]
        return None

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))]


def weighted(values: list[tuple[float, int]], q: float) -> float:
    """The q-quantile of values each standing for `count` events."""
    total = sum(c for _, c in values)
    acc = 0
    for v, c in sorted(values):
        acc += c
        if acc >= q * total:
            return v
    return sorted(values)[-1][0]


def generate(src: stream.Stream, staging: Path, rate: int, seconds: int, file_seconds: float,
             seed: int) -> list[tuple[Path, int]]:
    """One step's change files, written to `staging`: (path, events) in landing order."""
    staging.mkdir(parents=True, exist_ok=True)
    events, _ = src.changes(int(rate * seconds))
    random.Random(seed).shuffle(events)  # each file a mix of kinds (distinct keys: order is free)
    per = max(1, int(rate * file_seconds))
    out = []
    for i in range(0, len(events), per):
        path = staging / f"step-{seed}-{i // per:05d}.avro"
        with open(path, "wb") as fh:
            fastavro.writer(fh, stream.SCHEMA, events[i:i + per], codec="null")
        out.append((path, len(events[i:i + per])))
    return out


def land_file(landing: stream.Landing, staged: Path, count: int) -> int:
    """Move a staged file into the landing folder under the S3 sink's name; its modification time (ms)."""
    from hudi_cdc.sample import file_name

    path = landing.dir / file_name(stream.TOPIC, landing.offset)
    landing.next_ns = max(landing.next_ns, time.time_ns() - time.time_ns() % 1_000_000)
    os.utime(staged, ns=(landing.next_ns, landing.next_ns))
    mtime_ms = landing.next_ns // 1_000_000
    landing.next_ns += 1_000_000
    os.rename(staged, path)
    landing.offset += count
    return mtime_ms


def wait_covered(mon: Monitor, mtime_ms: int, limit: float, proc: subprocess.Popen) -> bool:
    deadline = time.time() + limit
    while time.time() < deadline:
        if mon.covered_at(mtime_ms) is not None:
            return True
        if proc.poll() is not None:
            raise RuntimeError(f"the continuous stream exited {proc.returncode}")
        time.sleep(0.5)
    return False


def step(mon: Monitor, proc, landing: stream.Landing, files: list[tuple[Path, int]], rate: int,
         file_seconds: float, drain: float, bound: float) -> dict:
    landed: list[tuple[int, float, int]] = []  # (mtime ms, wall time landed, events)
    load_start = os.getloadavg()[0]
    cpu0 = procs.cpu_seconds(proc.pid)
    t0 = time.time() + 0.5
    for i, (path, count) in enumerate(files):
        delay = t0 + i * file_seconds - time.time()
        if delay > 0:
            time.sleep(delay)
        wall = time.time()
        landed.append((land_file(landing, path, count), wall, count))
        if proc.poll() is not None:
            raise RuntimeError(f"the continuous stream exited {proc.returncode}")
    fed_s = time.time() - t0
    drained = wait_covered(mon, landed[-1][0], drain, proc)
    cpu1 = procs.cpu_seconds(proc.pid)
    fresh = []
    for mtime_ms, _wall, count in landed:
        seen = mon.covered_at(mtime_ms)
        fresh.append(((seen if seen is not None else time.time()) - mtime_ms / 1000, count))
    done = max(c["seen"] for c in mon.commits) if drained else time.time()
    events = sum(c for _, _, c in landed)
    commits = [c for c in mon.commits if c["seen"] >= t0 and c["seen"] <= done]
    res = {"offered_rate": rate, "events": events, "files": len(landed), "feed_s": round(fed_s, 1),
           "drained": drained, "p50_s": round(weighted(fresh, 0.50), 1), "p95_s": round(weighted(fresh, 0.95), 1),
           "max_s": round(max(f for f, _ in fresh), 1),
           "applied_rate": round(events / max(1e-9, done - t0)) if drained else None,
           "commits": len(commits), "pipeline_cpu_s": round(cpu1 - cpu0, 1),
           "load_avg_start": round(load_start, 2), "load_avg_end": round(os.getloadavg()[0], 2)}
    res["sustained"] = bool(drained and res["p95_s"] <= bound)
    return res


def round_phases_since(log: Path, offset: int) -> dict[str, float]:
    from benchmarks.scenarios import round_phases

    tmp = log.with_suffix(".tail")
    tmp.write_text(log.read_text(errors="replace")[offset:])
    return round_phases(str(tmp))


def prepare(args, work: Path) -> tuple[Variant, stream.Stream]:
    landing = work / "landing"
    if landing.exists():
        shutil.rmtree(landing)
    v = Variant(work / "mor", landing, MOR, hudi_options=json.loads(args.hudi_options),
                compaction_delta_commits=args.compaction_delta_commits).write()
    src = stream.Stream(args.rows, seed=23)
    if args.from_pristine:
        # a MoR table of the defaults bootstrapped from benchmarks/stream.py's snapshot at --rows
        # (python -m benchmarks.run --keep ...: <work>/main/defaults-mor/pristine)
        if v.lake.exists():
            shutil.rmtree(v.lake)
        shutil.copytree(args.from_pristine, v.lake, symlinks=True)
        src.adopt()
        stream.Landing(landing)  # the empty landing folder
        progress(f"table copied from {args.from_pristine}")
        return v, src
    t = time.perf_counter()
    stream.Landing(landing).land_snapshot(src, 10)
    progress(f"snapshot of {args.rows:,} rows landed ({time.perf_counter() - t:.0f}s); bootstrapping MoR")
    m = v.bootstrap(work / "logs" / "bootstrap.log")
    progress(f"bootstrap {m.seconds:.1f}s")
    return v, src


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rates", default="5000,10000,20000", help="offered rates, events/s, in order")
    ap.add_argument("--step-seconds", type=int, default=90, help="how long each rate is offered")
    ap.add_argument("--file-seconds", type=float, default=1.0, help="one landed file per this many seconds")
    ap.add_argument("--drain-seconds", type=float, default=180, help="after the last file: wait this long")
    ap.add_argument("--p95-bound", type=float, default=30.0)
    ap.add_argument("--stop-after-fail", action="store_true", help="stop at the first rate not sustained")
    ap.add_argument("--hudi-options", default="{}", help='JSON: the table\'s hudi_options, e.g. '
                    '\'{"hoodie.compaction.target.io": "40"}\'')
    ap.add_argument("--compaction-delta-commits", type=int, help="the table's compaction_delta_commits")
    ap.add_argument("--from-pristine", help="copy this bootstrapped MoR table instead of bootstrapping one")
    ap.add_argument("--work", default="/work/bench-data/sustained")
    ap.add_argument("--out", help="results JSON (default: print only)")
    args = ap.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    v, src = prepare(args, work)
    landing = stream.Landing(v.landing)
    command = "python -m benchmarks.sustained " + " ".join(argv if argv is not None else sys.argv[1:])
    results: dict = {"command": command,
                     "machine": report.machine(), "rows": args.rows, "table_type": "MERGE_ON_READ",
                     "p95_bound_s": args.p95_bound, "steps": []}
    log_path = work / "logs" / "stream-continuous.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("w")
    proc = subprocess.Popen(v.cli("stream", "--table", stream.TABLE, "--type", "mor"), stdout=log,
                            stderr=subprocess.STDOUT, env=procs.env())
    rss = procs.PeakRss(proc.pid)
    mon = Monitor(v.table_path)
    try:
        warm = generate(src, work / "staging", 100, 1, 1.0, seed=0)
        t = time.time()
        mtime = land_file(landing, *warm[0])
        if not wait_covered(mon, mtime, 600, proc):
            raise RuntimeError("the warm-up file was not committed within 600 s")
        progress(f"stream up, warm-up file committed after {time.time() - t:.1f}s")
        for i, rate in enumerate(int(r) for r in args.rates.split(",")):
            t = time.perf_counter()
            files = generate(src, work / "staging", rate, args.step_seconds, args.file_seconds, seed=i + 1)
            progress(f"rate {rate:,}/s: {sum(c for _, c in files):,} events in {len(files)} files generated "
                     f"({time.perf_counter() - t:.0f}s); feeding for {args.step_seconds}s")
            log.flush()
            offset = log_path.stat().st_size
            res = step(mon, proc, landing, files, rate, args.file_seconds, args.drain_seconds, args.p95_bound)
            res["phases_s"] = round_phases_since(log_path, offset)
            results["steps"].append(res)
            progress(f"rate {rate:,}/s: {json.dumps(res)}")
            report.save(results, args.out)
            if not res["drained"]:
                progress("backlog not drained: stopping the ladder")
                break
            if args.stop_after_fail and not res["sustained"]:
                break
    finally:
        mon.stop()
        procs.stop(proc)  # a clean stop after the round in flight
        results["continuous_peak_rss_mb"] = round(rss.stop())
        log.close()
    report.sustained_summary(results)
    results["commits"] = mon.commits
    return report.finish(results, args.out)


if __name__ == "__main__":
    sys.exit(main())
