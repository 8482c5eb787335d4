"""Sustained throughput: a continuous `hudi-cdc stream` (no --once) on a MoR table, fed at fixed offered
rates by a feeder landing S3-sink Avro files; per rate, the freshness of every event (landed -> readable
in the lake, i.e. the commit that covers its file is complete) and whether the pipeline kept up.

    python -m benchmarks.sustained --rows 10000000 --rates 5000,10000,20000 [--step-seconds 90]
        [--tables N] [--from-pristine DIR] [--work DIR] [--out benchmarks/results/<date>-sustained.json]
        [--hudi-options JSON] [--compaction-delta-commits N]

The feeder pre-generates each step's change files (benchmarks/stream.py: updates, partition moves,
key-only deletes, inserts, redeliveries; one file per --file-seconds) while the stream is idle, then lands
them on schedule (write elsewhere, set the modification time, rename into the landing folder: what the
streamer's checkpoint needs), so generating events costs the measured pipeline no CPU. An event's source
time is the moment its file lands (an S3 sink with no flush delay); it is readable once a completed
deltacommit carries a checkpoint at or past its file's modification time (a monitor polls the timeline
every 0.2 s and reads the newest checkpoint with hudi-rs). A rate is sustained when every file is
committed within --drain-seconds after the last one landed and the p95 freshness is <= --p95-bound.

--tables N (N > 1): N MoR tables of rows/N rows each (customers_t00.., as benchmarks/multi_table.py),
bootstrapped by one `hudi-cdc bootstrap`, streamed by one continuous `hudi-cdc stream --all`; the offered
rate is split evenly over the tables (each table gets one file of rate/N events per --file-seconds), a
monitor watches each table, and a step's figures are over every event of every table.
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
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # python benchmarks/sustained.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import fastavro  # noqa: E402

from benchmarks import multi_table, procs, report, stream  # noqa: E402
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
             seed: int, schema: dict = stream.SCHEMA) -> list[tuple[Path, int]]:
    """One step's change files, written to `staging`: (path, events) in landing order."""
    staging.mkdir(parents=True, exist_ok=True)
    events, _ = src.changes(int(rate * seconds))
    random.Random(seed).shuffle(events)  # each file a mix of kinds (distinct keys: order is free)
    per = max(1, int(rate * file_seconds))
    out = []
    for i in range(0, len(events), per):
        path = staging / f"step-{seed}-{i // per:05d}.avro"
        with open(path, "wb") as fh:
            fastavro.writer(fh, schema, events[i:i + per], codec="null")
        out.append((path, len(events[i:i + per])))
    return out


def land_file(landing: stream.Landing, staged: Path, count: int) -> int:
    """Move a staged file into the landing folder under the S3 sink's name; its modification time (ms)."""
    from hudi_cdc.sample import file_name

    path = landing.dir / file_name(landing.topic, landing.offset)
    landing.next_ns = max(landing.next_ns, time.time_ns() - time.time_ns() % 1_000_000)
    os.utime(staged, ns=(landing.next_ns, landing.next_ns))
    mtime_ms = landing.next_ns // 1_000_000
    landing.next_ns += 1_000_000
    os.rename(staged, path)
    landing.offset += count
    return mtime_ms


@dataclass
class Feed:
    """One table the feeder lands change files for: its source stream, landing folder, staging folder
    (the step's files, generated before feeding) and the monitor of its timeline."""

    name: str
    src: stream.Stream
    landing: stream.Landing
    table: Path  # the Hudi table the continuous stream writes
    staging: Path
    mon: Monitor = field(init=False)

    def generate(self, rate: int, seconds: int, file_seconds: float, seed: int) -> list[tuple[Path, int]]:
        return generate(self.src, self.staging, rate, seconds, file_seconds, seed, self.landing.schema)


def shares(rate: int, tables: int) -> list[int]:
    """An offered rate split over the tables as evenly as whole events allow."""
    return [rate // tables + (i < rate % tables) for i in range(tables)]


def wait_covered(feeds: list[Feed], mtimes_ms: list[int], limit: float, proc: subprocess.Popen) -> bool:
    """Whether every table's monitor sees a commit covering its file (of modification time mtimes_ms[i])
    within `limit` seconds."""
    deadline = time.time() + limit
    while time.time() < deadline:
        if all(f.mon.covered_at(m) is not None for f, m in zip(feeds, mtimes_ms, strict=True)):
            return True
        if proc.poll() is not None:
            raise RuntimeError(f"the continuous stream exited {proc.returncode}")
        time.sleep(0.5)
    return False


def step(feeds: list[Feed], proc, files: list[list[tuple[Path, int]]], rate: int, file_seconds: float,
         drain: float, bound: float) -> dict:
    """Land each table's files[i] (one file of each table per file_seconds), wait for the backlog to drain;
    the freshness of every event (weighted), the applied rate, commits and CPU of the step."""
    landed: list[list[tuple[int, int]]] = [[] for _ in feeds]  # per table: (mtime ms, events)
    load_start = os.getloadavg()[0]
    cpu0 = procs.cpu_seconds(proc.pid)
    t0 = time.time() + 0.5
    for i in range(max(len(fs) for fs in files)):
        delay = t0 + i * file_seconds - time.time()
        if delay > 0:
            time.sleep(delay)
        for feed, fs, out in zip(feeds, files, landed, strict=True):
            if i < len(fs):
                out.append((land_file(feed.landing, *fs[i]), fs[i][1]))
        if proc.poll() is not None:
            raise RuntimeError(f"the continuous stream exited {proc.returncode}")
    fed_s = time.time() - t0
    drained = wait_covered(feeds, [ls[-1][0] for ls in landed], drain, proc)
    cpu1 = procs.cpu_seconds(proc.pid)
    now = time.time()
    fresh: list[list[tuple[float, int]]] = []  # per table: (seconds landed -> readable, events)
    for feed, ls in zip(feeds, landed, strict=True):
        seen = [feed.mon.covered_at(mtime_ms) for mtime_ms, _ in ls]
        fresh.append([((s if s is not None else now) - m / 1000, c) for s, (m, c) in zip(seen, ls, strict=True)])
    # the step ends at the commit covering the last file of the last table to drain
    done = max(f.mon.covered_at(ls[-1][0]) or now for f, ls in zip(feeds, landed, strict=True)) if drained else now
    every = [x for fs in fresh for x in fs]
    events = sum(c for _, c in every)
    commits = {f.name: sum(1 for c in f.mon.commits if t0 <= c["seen"] <= done) for f in feeds}
    res = {"offered_rate": rate, "events": events, "files": len(every), "feed_s": round(fed_s, 1),
           "drained": drained, "p50_s": round(weighted(every, 0.50), 1), "p95_s": round(weighted(every, 0.95), 1),
           "max_s": round(max(f for f, _ in every), 1),
           "applied_rate": round(events / max(1e-9, done - t0)) if drained else None,
           "commits": sum(commits.values()), "pipeline_cpu_s": round(cpu1 - cpu0, 1),
           "load_avg_start": round(load_start, 2), "load_avg_end": round(os.getloadavg()[0], 2)}
    res["sustained"] = bool(drained and res["p95_s"] <= bound)
    if len(feeds) > 1:  # a table starving shows here
        res["per_table"] = {f.name: {"commits": commits[f.name], "p95_s": round(weighted(fs, 0.95), 1),
                                     "max_s": round(max(x for x, _ in fs), 1)}
                            for f, fs in zip(feeds, fresh, strict=True)}
    return res


def round_phases_since(log: Path, offset: int) -> dict[str, float]:
    from benchmarks.scenarios import round_phases

    tmp = log.with_suffix(".tail")
    tmp.write_text(log.read_text(errors="replace")[offset:])
    return round_phases(str(tmp))


def prepare(args, work: Path) -> tuple[list[Feed], list[str]]:
    """The one table (bootstrapped, or copied --from-pristine): its feed and the continuous stream's command."""
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
        progress(f"table copied from {args.from_pristine}")
    else:
        t = time.perf_counter()
        stream.Landing(landing).land_snapshot(src, 10)
        progress(f"snapshot of {args.rows:,} rows landed ({time.perf_counter() - t:.0f}s); bootstrapping MoR")
        m = v.bootstrap(work / "logs" / "bootstrap.log")
        progress(f"bootstrap {m.seconds:.1f}s")
    feed = Feed(stream.TABLE, src, stream.Landing(landing), v.table_path, work / "staging")
    return [feed], v.cli("stream", "--table", stream.TABLE, "--type", "mor")


def prepare_all(args, work: Path) -> tuple[list[Feed], list[str]]:
    """--tables N: N MoR tables of rows/N rows (benchmarks/multi_table.py's pipeline), bootstrapped by one
    `hudi-cdc bootstrap`; their feeds and the continuous `stream --all` command."""
    for old in (work / "landing", work / "lake"):
        if old.exists():
            shutil.rmtree(old)
    names = [f"customers_t{i:02d}" for i in range(args.tables)]
    config = multi_table.pipeline(work, names, hudi_options=json.loads(args.hudi_options),
                                  compaction_delta_commits=args.compaction_delta_commits)
    t = time.perf_counter()
    srcs = multi_table.land(work, names, args.rows // args.tables)
    progress(f"snapshots of {args.tables} x {args.rows // args.tables:,} rows landed "
             f"({time.perf_counter() - t:.0f}s); bootstrapping {args.tables} MoR tables")
    m = procs.run(procs.hudi_cdc("--config", str(config), "bootstrap"), work / "logs" / "bootstrap.log",
                  timeout=6 * 3600)
    progress(f"bootstrap {m.seconds:.1f}s")
    feeds = [Feed(n, src, stream.Landing(work / "landing", f"bench.public.{n}"), work / "lake" / f"{n}_mor",
                  work / "staging" / n) for n, src in zip(names, srcs, strict=True)]
    return feeds, procs.hudi_cdc("--config", str(config), "stream", "--all")


def ladder(args, work: Path, feeds: list[Feed], command: list[str], rates: list[int], results: dict) -> None:
    """The continuous stream started, a warm-up file per table committed, then each rate's step."""
    log_path = work / "logs" / "stream-continuous.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=procs.env())
    rss = procs.PeakRss(proc.pid)
    for f in feeds:
        f.mon = Monitor(f.table)
    try:
        t = time.time()
        warm = [land_file(f.landing, *f.generate(100, 1, 1.0, seed=0)[0]) for f in feeds]
        if not wait_covered(feeds, warm, 600, proc):
            raise RuntimeError("the warm-up file was not committed within 600 s")
        progress(f"stream up, warm-up file committed after {time.time() - t:.1f}s")
        for i, rate in enumerate(rates):
            t = time.perf_counter()
            files = [f.generate(r, args.step_seconds, args.file_seconds, seed=i + 1)
                     for f, r in zip(feeds, shares(rate, len(feeds)), strict=True)]
            over = f" over {len(feeds)} tables" if len(feeds) > 1 else ""
            progress(f"rate {rate:,}/s: {sum(c for fs in files for _, c in fs):,} events in "
                     f"{sum(len(fs) for fs in files)} files{over} generated ({time.perf_counter() - t:.0f}s); "
                     f"feeding for {args.step_seconds}s")
            log.flush()
            offset = log_path.stat().st_size
            res = step(feeds, proc, files, rate, args.file_seconds, args.drain_seconds, args.p95_bound)
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
        for f in feeds:
            f.mon.stop()
        procs.stop(proc)  # a clean stop after the round in flight
        results["continuous_peak_rss_mb"] = round(rss.stop())
        results["continuous_peak_pss_mb"] = round(rss.peak_pss_mb)  # shared pages counted once (procs.PeakRss)
        results["continuous_rss_breakdown_mb"] = rss.breakdown
        log.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000, help="rows in all (--tables N: rows/N each)")
    ap.add_argument("--tables", type=int, default=1, help="N > 1: N tables under one `stream --all`")
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
    rates = [int(r) for r in args.rates.split(",")]
    if args.tables < 1:
        ap.error("--tables must be at least 1")
    if args.tables > 1 and args.from_pristine:
        ap.error("--from-pristine applies only to --tables 1 (--tables N bootstraps its N tables)")
    if min(rates) < args.tables:
        ap.error(f"every rate must be at least --tables ({args.tables}): each table gets rate/N events/s")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    feeds, stream_argv = prepare_all(args, work) if args.tables > 1 else prepare(args, work)
    command = "python -m benchmarks.sustained " + " ".join(argv if argv is not None else sys.argv[1:])
    results: dict = {"command": command, "machine": report.machine(), "rows": args.rows}
    if args.tables > 1:
        results.update(tables=args.tables, rows_per_table=args.rows // args.tables)
    results.update(table_type=MOR, p95_bound_s=args.p95_bound, steps=[])
    ladder(args, work, feeds, stream_argv, rates, results)
    report.sustained_summary(results)
    results["commits"] = feeds[0].mon.commits if len(feeds) == 1 else {f.name: f.mon.commits for f in feeds}
    return report.finish(results, args.out)


if __name__ == "__main__":
    sys.exit(main())
