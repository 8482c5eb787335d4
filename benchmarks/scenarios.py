"""The measured scenarios. Each returns plain dicts (seconds, peak RSS, counts) for report.py; every
timing is a whole process (procs.run), medians over `runs`, and runs alternate between variants so
load from other jobs spreads over all of them."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from . import procs, stream
from .lake import INDEXES, RECORD_LEVEL, SETTINGS, Variant

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
TYPES = {"cow": COW, "mor": MOR}


@dataclass
class Ctx:
    rows: int
    runs: int
    work: Path
    progress: Callable[[str], None]
    growth_sizes: list[int]
    growth_changes: int
    latency_files: int
    growth_runs: int
    sync_interval: int | None
    # by default every lookup choice but the record-level index ones (on demand: LOCATED_RLI, LOCATED_RLI_MOR)
    growth_series: list[str] = field(default_factory=lambda: [s for s in GROWTH_SERIES if "_RLI" not in s])
    results: dict = field(default_factory=dict)
    _main: dict = field(default_factory=dict)

    def log(self, name: str) -> Path:
        return self.work / "logs" / f"{name}.log"


def summary(samples: list[procs.Measured]) -> dict:
    secs = [m.seconds for m in samples]
    return {"median_s": statistics.median(secs), "runs_s": [round(s, 2) for s in secs],
            "peak_rss_mb": max(m.peak_rss_mb for m in samples), "load_avg": [m.load_avg for m in samples]}


PHASES = re.compile(r"committed \S+, checkpoint \S+ \((?P<phases>[^)]*)\)")


def round_phases(log: str) -> dict[str, float]:
    """The per-phase seconds the streamer logs for its round (jobs/stream/round.py), summed over rounds."""
    out: dict[str, float] = {}
    for m in PHASES.finditer(Path(log).read_text(errors="replace")):  # the CLI relays the job's lines
        for part in m.group("phases").split(", "):
            name, secs, _unit = part.rsplit(" ", 2)
            out[name] = round(out.get(name, 0.0) + float(secs), 2)
    return out


def last_commits(path: Path, n: int = 2) -> list[dict]:
    out = subprocess.run(procs.hudi_cdc("inspect", "commits", "--path", str(path), "-o", "json"),
                         capture_output=True, text=True, env=procs.env(), check=True).stdout
    return json.loads(out)[-n:]


# ---- the main stream: the snapshot at --rows, then 1% change batches --------------------------------

def main_stream(ctx: Ctx) -> dict:
    """Land the snapshot once (10 files) and bootstrap the tables the later scenarios start from."""
    if ctx._main:
        return ctx._main
    landing = ctx.work / "main" / "landing"
    src = stream.Stream(ctx.rows)
    t = time.perf_counter()
    files = stream.Landing(landing).land_snapshot(src, 10)
    ctx.progress(f"landed the snapshot: {ctx.rows:,} rows in {len(files)} files ({time.perf_counter() - t:.1f}s)")
    ctx._main = {"landing": landing, "stream": src, "variants": {}, "bootstraps": {}}
    return ctx._main


def variant(ctx: Ctx, settings: str, kind: str, **kw) -> Variant:
    main = main_stream(ctx)
    key = (settings, kind, tuple(sorted(kw.items())))
    if key not in main["variants"]:
        name = f"{settings}-{kind}" + "".join(f"-{k}{v}" for k, v in sorted(kw.items()))
        main["variants"][key] = Variant(ctx.work / "main" / name, main["landing"], TYPES[kind],
                                        dict(SETTINGS[settings]), **kw).write()
    return main["variants"][key]


def bootstrapped(ctx: Ctx, v: Variant) -> Variant:
    """v's table bootstrapped from the snapshot and kept aside (once)."""
    if not v.pristine.exists():
        if ctx._main.get("changed"):
            raise RuntimeError("internal: a bootstrap after the change batch was landed")
        ctx.progress(f"bootstrap {v.work.name} (setup)")
        v.bootstrap(ctx.log(f"setup-bootstrap-{v.work.name}"))
        v.keep()
    return v


def land_change(ctx: Ctx) -> dict:
    main = main_stream(ctx)
    if "change" not in main:
        events, mix = main["stream"].changes(max(1, ctx.rows // 100))
        stream.Landing(main["landing"]).land(events)
        main["change"] = {"events": len(events), "mix": mix}
        main["changed"] = True
        ctx.progress(f"landed a 1% change batch: {len(events):,} events {mix}")
    return main["change"]


def plain_parquet_argv(v: Variant, out: Path) -> list[str]:
    """spark-submit of plain_parquet.py with exactly the Spark settings hudi-cdc's bootstrap uses."""
    from hudi_cdc.config import load_pipeline
    from hudi_cdc.core import render
    from hudi_cdc.toolchain.jars import ensure_jars
    from hudi_cdc.toolchain.java_spark import spark_submit

    pipeline = load_pipeline(str(v.config))
    job = render.Job(stream.TABLE, v.table_type, "BULK_INSERT")
    script = str(Path(__file__).with_name("plain_parquet.py"))
    argv = render.local_argv(pipeline, [job], v.work, [str(p) for p in ensure_jars("1.2.0")], script)
    argv = argv[:argv.index(script) + 1] + [str(v.landing / stream.TOPIC), str(out), stream.PARTITION]
    argv[0] = str(spark_submit())
    return argv


def spark_env() -> dict[str, str]:
    """What hudi-cdc's local runner sets for spark-submit (runners/local/runner.py)."""
    import sys

    from hudi_cdc.toolchain.java_spark import find_java, spark_home

    java = find_java(17, "Spark")
    return {"SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "JAVA_HOME": os.environ.get("JAVA_HOME") or str(Path(java).resolve().parent.parent)}


def bootstrap(ctx: Ctx) -> dict:
    """Bootstrap CoW and MoR (hudi-cdc defaults) vs Spark writing plain partitioned Parquet."""
    cow, mor = variant(ctx, "defaults", "cow"), variant(ctx, "defaults", "mor")
    samples: dict[str, list[procs.Measured]] = {"plain parquet": [], "bootstrap cow": [], "bootstrap mor": []}
    for run in range(ctx.runs):
        out = ctx.work / "main" / "plain"
        subprocess.run(["rm", "-rf", str(out)], check=True)
        m = procs.run(plain_parquet_argv(cow, out), ctx.log(f"plain-{run}"), extra_env=spark_env())
        samples["plain parquet"].append(m)
        ctx.progress(f"bootstrap run {run + 1}/{ctx.runs}: plain parquet {m.seconds:.1f}s")
        for name, v in (("bootstrap cow", cow), ("bootstrap mor", mor)):
            m = v.bootstrap(ctx.log(f"{name.replace(' ', '-')}-{run}"))
            samples[name].append(m)
            ctx.progress(f"bootstrap run {run + 1}/{ctx.runs}: {name} {m.seconds:.1f}s, peak {m.peak_rss_mb:.0f} MB")
    for v in (cow, mor):
        v.keep()
    plain_bytes = sum(p.stat().st_size for p in (ctx.work / "main" / "plain").rglob("*.parquet"))
    res = {k: summary(s) for k, s in samples.items()}
    res["sizes_mb"] = {"plain parquet": plain_bytes / 2**20, "bootstrap cow": cow.size_bytes() / 2**20,
                       "bootstrap mor": mor.size_bytes() / 2**20}
    for kind in ("cow", "mor"):
        res[f"ratio_{kind}"] = res[f"bootstrap {kind}"]["median_s"] / res["plain parquet"]["median_s"]
    return res


# (settings, table type) of the upsert scenario; "index" = the defaults with the lookup left to Hudi's
# index (what hudi-cdc did before jobs/stream/located.py, and what HoodieStreamer does)
UPSERT_VARIANTS = [("defaults", "cow"), ("defaults", "mor"), ("index", "cow"), ("index", "mor"),
                   ("seed", "cow"), ("seed", "mor")]


def upsert(ctx: Ctx) -> dict:
    """One 1% upsert round, CoW and MoR, hudi-cdc's defaults vs the seed's settings."""
    vs = {f"{s} {k}": bootstrapped(ctx, variant(ctx, s, k)) for s, k in UPSERT_VARIANTS}
    change = land_change(ctx)
    samples: dict[str, list[procs.Measured]] = {n: [] for n in vs}
    commits: dict[str, list[dict]] = {}
    for run in range(ctx.runs):
        for name, v in vs.items():
            v.restore()
            m = v.stream_once(ctx.log(f"upsert-{name.replace(' ', '-')}-{run}"))
            samples[name].append(m)
            commits[name] = last_commits(v.table_path)
            ctx.progress(f"upsert run {run + 1}/{ctx.runs}: {name} {m.seconds:.1f}s, peak {m.peak_rss_mb:.0f} MB")
    res: dict = {"change": change, **{n: summary(s) for n, s in samples.items()}, "commits": commits}
    res["ratio_mor_vs_cow_index"] = res["index mor"]["median_s"] / res["index cow"]["median_s"]
    res["ratio_mor_vs_cow"] = res["defaults mor"]["median_s"] / res["defaults cow"]["median_s"]
    for kind in ("cow", "mor"):
        res[f"speedup_defaults_vs_seed_{kind}"] = res[f"seed {kind}"]["median_s"] / res[f"defaults {kind}"]["median_s"]
    return res


# the growth scenario's series: (table type, hudi_options) per lookup choice; CoW for each, plus the
# defaults on MoR (a CoW round rewrites every file a change touches, so it grows with the table anyway)
GROWTH_SERIES = {**{i: (COW, o) for i, o in INDEXES.items()}, "LOCATED_MOR": (MOR, INDEXES["LOCATED"]),
                 "LOCATED_RLI": (COW, RECORD_LEVEL), "LOCATED_RLI_MOR": (MOR, RECORD_LEVEL)}


def growth(ctx: Ctx) -> dict:
    """The same change round (growth_changes events) against tables of each size, per lookup choice."""
    changes = min(ctx.growth_changes, min(ctx.growth_sizes) // 5)
    res: dict = {"changes": changes, "sizes": ctx.growth_sizes, "indexes": list(ctx.growth_series),
                 "points": {}}
    for size in ctx.growth_sizes:
        vs = {}
        main = ctx._main
        if size == ctx.rows and main and not main.get("changed") and all(
                variant(ctx, "defaults", k).pristine.exists() for k in ("cow", "mor")):
            # the bootstrap scenario's tables at this size are the defaults' (LOCATED, LOCATED_MOR): reused,
            # which saves generating and bootstrapping the largest size again
            landing, src = main["landing"], main["stream"]
            main["changed"] = True
        else:
            landing = ctx.work / f"growth-{size}" / "landing"
            src = stream.Stream(size, seed=11)
            t = time.perf_counter()
            stream.Landing(landing).land_snapshot(src, 10)
            ctx.progress(f"growth {size:,} rows: snapshot landed ({time.perf_counter() - t:.0f}s)")
        for index in ctx.growth_series:
            table_type, options = GROWTH_SERIES[index]
            if landing == ctx._main.get("landing") and index in ("LOCATED", "LOCATED_MOR"):
                vs[index] = variant(ctx, "defaults", "cow" if index == "LOCATED" else "mor")
                continue
            v = Variant(ctx.work / f"growth-{size}" / index, landing, table_type, dict(options)).write()
            ctx.progress(f"growth {size:,} rows: bootstrap {index} (setup)")
            m = v.bootstrap(ctx.log(f"growth-setup-{size}-{index}"))
            ctx.progress(f"growth {size:,} rows: bootstrap {index} {m.seconds:.1f}s, peak {m.peak_rss_mb:.0f} MB")
            v.keep()
            vs[index] = v
        events, _ = src.changes(changes)
        stream.Landing(landing).land(events)
        samples: dict[str, list[procs.Measured]] = {i: [] for i in vs}
        phases: dict[str, list[dict]] = {i: [] for i in vs}
        for run in range(ctx.growth_runs):
            for index, v in vs.items():
                v.restore()
                m = v.stream_once(ctx.log(f"growth-{size}-{index}-{run}"))
                samples[index].append(m)
                phases[index].append(round_phases(m.log))
                ctx.progress(f"growth {size:,} rows run {run + 1}/{ctx.growth_runs}: {index} {m.seconds:.1f}s "
                             f"{phases[index][-1]} (load {m.load_avg})")
        res["points"][str(size)] = {i: {**summary(s), "phases": phases[i]} for i, s in samples.items()}
    lo, hi = (str(s) for s in (min(ctx.growth_sizes), max(ctx.growth_sizes)))
    res["growth_ratio"] = {i: res["points"][hi][i]["median_s"] / res["points"][lo][i]["median_s"]
                           for i in ctx.growth_series}
    return res


def _completed(table: Path) -> int:
    tl = table / ".hoodie" / "timeline"
    return sum(1 for p in tl.iterdir() if p.name.endswith((".commit", ".deltacommit"))) if tl.exists() else 0


def latency(ctx: Ctx) -> dict:
    """Commit-to-visible in continuous mode (a file lands -> a completed commit readers see), and
    the per-round process overhead of --once with nothing to do."""
    work = ctx.work / "latency"
    landing = work / "landing"
    src = stream.Stream(1_000, seed=3)
    stream.Landing(landing).land_many(src.snapshot(), 1)
    settings = {"min_sync_interval_seconds": ctx.sync_interval} if ctx.sync_interval is not None else {}
    v = Variant(work / "cow", landing, COW, stream_settings=settings).write()
    v.bootstrap(ctx.log("latency-bootstrap"))
    once = []
    for run in range(ctx.runs):
        once.append(v.stream_once(ctx.log(f"latency-once-{run}")))
        ctx.progress(f"--once with nothing new, run {run + 1}/{ctx.runs}: {once[-1].seconds:.1f}s")
    cli = [procs.run(procs.hudi_cdc("--help"), ctx.log(f"cli-help-{r}")) for r in range(ctx.runs)]
    log = ctx.log("latency-continuous").open("w")
    proc = subprocess.Popen(v.cli("stream", "--table", stream.TABLE, "--type", "cow"), stdout=log,
                            stderr=subprocess.STDOUT, env=procs.env())
    rss = procs.PeakRss(proc.pid)
    lat: list[float] = []
    try:
        landing_api = stream.Landing(landing)
        for i in range(ctx.latency_files + 1):  # the first one warms the JVM up and is not counted
            before = _completed(v.table_path)
            events, _ = src.changes(10)
            landing_api.land(events)
            landed = time.time()
            while _completed(v.table_path) == before:
                if proc.poll() is not None:
                    raise RuntimeError(f"the continuous stream exited {proc.returncode}; log {log.name}")
                if time.time() - landed > 600:
                    raise RuntimeError("no commit within 600 s of a landed file")
                time.sleep(0.05)
            if i:
                lat.append(time.time() - landed)
                ctx.progress(f"continuous: file {i}/{ctx.latency_files} visible after {lat[-1]:.1f}s")
            time.sleep((i * 0.37) % 2.0)  # land at different phases of the sync interval
    finally:
        os.kill(proc.pid, signal.SIGTERM)  # a clean stop after the round in flight
        try:
            proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
        peak = rss.stop()
        log.close()
    # the last key written must be what `hudi-cdc show` returns
    shown = subprocess.run(v.cli("show", "--table", stream.TABLE, "--type", "cow", "--key",
                                 str(events[-1][stream.KEY]), "-o", "json"),
                           capture_output=True, text=True, env=procs.env())
    q = statistics.quantiles(lat, n=20) if len(lat) >= 2 else lat * 19
    from hudi_cdc.config.settings import StreamSettings

    interval = ctx.sync_interval if ctx.sync_interval is not None else StreamSettings().min_sync_interval_seconds
    return {"interval_s": interval,
            "files": len(lat), "latencies_s": [round(x, 2) for x in lat], "p50_s": statistics.median(lat),
            "p95_s": q[18], "continuous_peak_rss_mb": peak, "show_rc": shown.returncode,
            "show_saw_last_key": str(events[-1][stream.KEY]) in shown.stdout,
            "once_empty": summary(once), "cli_help": summary(cli)}


def _instant_seconds(a: str, b: str) -> float:
    fmt = "%Y%m%d%H%M%S%f"
    return (datetime.strptime(b[:17] + "000", fmt) - datetime.strptime(a[:17] + "000", fmt)).total_seconds()


def read_seconds(table: Path, runs: int) -> dict:
    """A snapshot read of the MoR table (what the _rt view returns: base files merged with logs), hudi-rs."""
    code = ("import sys,time;from hudi_cdc.lake.reader import read_table;t=time.perf_counter();"
            "n=len(read_table('file://'+sys.argv[1]));print(n, time.perf_counter()-t)")
    samples = []
    for _ in range(runs):
        import sys

        out = subprocess.run([sys.executable, "-c", code, str(table)], capture_output=True, text=True,
                             env=procs.env(), check=True).stdout.split()
        samples.append(float(out[1]))
    return {"rows": int(out[0]), "median_s": statistics.median(samples), "runs_s": [round(s, 3) for s in samples]}


def compaction(ctx: Ctx) -> dict:
    """MoR: a round of the 1% batch (one delta commit), then a second round that compacts inline
    (compaction_delta_commits=2); compaction time from the timeline, write amplification, snapshot
    reads before/after."""
    v = variant(ctx, "defaults", "mor", compaction_delta_commits=2)
    if not v.pristine.exists():  # the same table as the defaults' MoR bootstrap: only its properties differ
        import shutil

        shutil.copytree(bootstrapped(ctx, variant(ctx, "defaults", "mor")).pristine, v.pristine, symlinks=True)
    change = land_change(ctx)
    main = ctx._main
    v.restore()
    r1 = v.stream_once(ctx.log("compaction-round1"))
    before = read_seconds(v.table_path, ctx.runs)
    if "change2" not in main:
        events, _ = main["stream"].changes(max(1, ctx.rows // 100))
        stream.Landing(main["landing"]).land(events)
        main["change2"] = len(events)
    r2 = v.stream_once(ctx.log("compaction-round2"))
    after = read_seconds(v.table_path, ctx.runs)
    commits = json.loads(subprocess.run(procs.hudi_cdc("inspect", "commits", "--path", str(v.table_path), "-o", "json"),
                                        capture_output=True, text=True, env=procs.env(), check=True).stdout)
    comp = [c for c in commits if c.get("planned_action") == "compaction"]
    deltas = [c for c in commits if c["action"] == "deltacommit"]
    res = {"round1_s": r1.seconds, "round2_with_compaction_s": r2.seconds,
           "peak_rss_mb": max(r1.peak_rss_mb, r2.peak_rss_mb),
           "read_before": before, "read_after": after, "changes": change["events"] + main["change2"],
           "deltacommits": [{k: c.get(k) for k in ("records_written", "records_updated", "records_inserted",
                                                     "files_added", "files_updated", "bytes_written")} for c in deltas]}
    if comp:
        c = comp[-1]
        done = c.get("completion_time")
        res["compaction_s"] = _instant_seconds(c["requested_time"], done) if done else None
        res["compaction_records_written"] = c.get("records_written")
        res["compaction_bytes_written"] = c.get("bytes_written")
        res["write_amplification"] = (c.get("records_written") or 0) / max(1, res["changes"])
    return res


def prepare(ctx: Ctx, names: list[str]) -> None:
    """Bootstrap, before any change batch lands, every table the chosen scenarios start from."""
    if "upsert" in names:
        for s, k in UPSERT_VARIANTS:
            bootstrapped(ctx, variant(ctx, s, k))
    if "compaction" in names:
        bootstrapped(ctx, variant(ctx, "defaults", "mor"))


SCENARIOS: dict[str, Callable[[Ctx], dict]] = {
    "bootstrap": bootstrap, "upsert": upsert, "compaction": compaction, "growth": growth, "latency": latency,
}


def inspect(ctx: Ctx) -> dict:
    """`hudi-cdc inspect commits` vs the JVM's show_commits, whole processes (benchmarks/inspect_commits.py)."""
    import sys

    out = subprocess.run([sys.executable, str(Path(__file__).with_name("inspect_commits.py")), "--runs",
                          str(ctx.runs), "--output", "json"], capture_output=True, text=True, env=procs.env(),
                         check=True).stdout
    return json.loads(out)


SCENARIOS["inspect"] = inspect
