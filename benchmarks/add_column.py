"""What an `ALTER TABLE ... ADD COLUMN ... DEFAULT` costs (issue 36): the incremental snapshot capture
requests for the rows that existed (capture/defaults.py), and the stream round that writes them again.

    python -m benchmarks.add_column [--rows 1000000] [--types mor,cow] [--capture continuous|once]
        [--chunk-size N] [--work /work/bench-data/add-column] [--out results.json]

A throwaway PostgreSQL 15 (benchmarks/pg.py) with `customers` of --rows rows, then as a user does it, each
step a whole process (procs.run: seconds, peak RSS / PSS of its tree, load average at its end):
1. `init --from-database` (partitioned by country; --types), `capture --once` and `bootstrap`: the first
   load, the baseline;
2. `ALTER TABLE customers ADD COLUMN score int DEFAULT 7` (timed) and one INSERT (the first change after the
   DDL is what shows capture the new schema);
3. capture until `capture snapshot --status` says the table's snapshot completed: one continuous `capture`,
   stopped once it completed and its open file rotated (--capture continuous, the default), or `capture
   --once` again and again (--capture once: a PostgreSQL --once run stops at its end marker, so each carries
   out a chunk or none and the snapshot goes on in the next one); the snapshot's rows/s, the landed files
   and bytes;
4. `stream --table customers --type T --once` per table type (its phases, as the streamer logs them), the data
   files and bytes it wrote, then `verify --type T`: must say equal, the new column included.
The load average is sampled every 5 s over the whole run (the machine may be shared: read ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import yaml  # noqa: E402

from benchmarks import pg as bench_pg  # noqa: E402
from benchmarks import procs, report  # noqa: E402
from benchmarks.scenarios import round_phases  # noqa: E402

TABLE = "customers"
TYPES = {"mor": "MERGE_ON_READ", "cow": "COPY_ON_WRITE"}
COLUMNS = ("customer_id bigint PRIMARY KEY, name text, email text, country text, segment text, "
           "balance numeric(12,2), created_at timestamptz, active boolean")
SELECT = ("g, 'customer ' || g, 'c' || g || '@example.com', 'C' || lpad((g %% 20)::text, 2, '0'), "
          "(ARRAY['retail','smb','enterprise'])[1 + g %% 3], g * 0.01, "
          "timestamptz '2020-01-01' + g * interval '1 minute', g %% 7 <> 0")
DDL = f"ALTER TABLE {TABLE} ADD COLUMN score int DEFAULT 7"


def progress(msg: str) -> None:
    print(f"[add-column {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cli(config: Path, *args: str) -> list[str]:
    return procs.hudi_cdc("--config", str(config), *args)


class LoadAverage:
    """The 1-minute load average, sampled every 5 s until stopped: min, max, mean."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(5.0)

    def summary(self) -> dict:
        s = self.samples or [os.getloadavg()[0]]
        return {"min": round(min(s), 2), "max": round(max(s), 2), "mean": round(sum(s) / len(s), 2),
                "samples": len(s)}

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join(10)
        return self.summary()


def tree(path: Path, suffix: str = "") -> tuple[int, int]:
    """(files, bytes) under PATH whose names end with SUFFIX, Hudi's metadata folder left out."""
    files = [p for p in path.rglob(f"*{suffix}") if p.is_file() and ".hoodie" not in p.parts] if path.exists() else []
    return len(files), sum(p.stat().st_size for p in files)


TABLE_PHASES = re.compile(r"(?P<table>\S+): committed \S+, checkpoint \S+ \((?P<phases>[^)]*)\)")


def phases_by_table(log: str) -> dict[str, dict[str, float]]:
    """The per-phase seconds of each table's commit, as bootstrap logs them (`bench_mor.customers: committed ...`)."""
    out: dict[str, dict[str, float]] = {}
    for m in TABLE_PHASES.finditer(Path(log).read_text(errors="replace")):
        for part in m.group("phases").split(", "):
            name, secs, _unit = part.rsplit(" ", 2)
            out.setdefault(m.group("table"), {})[name] = float(secs)
    return out


def measured(m: procs.Measured) -> dict:
    return {"s": round(m.seconds, 1), "peak_rss_mb": round(m.peak_rss_mb), "peak_pss_mb": m.peak_pss_mb,
            "cpu_s": m.cpu_s, "load_avg": m.load_avg}


def init_pipeline(work: Path, pg, env: dict, kinds: list[str], chunk_size: int | None) -> Path:
    """`init --from-database` (partition field country), then the table types (and chunk size) asked for."""
    project = work / "p"
    procs.run(procs.hudi_cdc("init", str(project), "--from-database", "--dbname", "bench", "--user", "bench",
                             "--host", "127.0.0.1", "--port", str(pg.port), "--password-env", bench_pg.PASSWORD_ENV,
                             "--table", TABLE, "--partition-field", f"{TABLE}=country"),
              work / "logs" / "init.log", extra_env=env)
    config = project / "hudi-cdc.yaml"
    doc = yaml.safe_load(config.read_text())
    doc["tables"][TABLE]["table_types"] = [TYPES[k] for k in kinds]
    if chunk_size:
        doc["source"]["database"]["snapshot_chunk_size"] = chunk_size
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    return config


def snapshot_state(config: Path) -> dict:
    """The table's row of `capture snapshot --status` (read in this process: JSON files, no database)."""
    from hudi_cdc.capture.signals import snapshot_status
    from hudi_cdc.config import load_pipeline

    return next((r for r in snapshot_status(load_pipeline(config)) if r["table"] == TABLE), {})


def capture_once(config: Path, env: dict, log: Path) -> dict:
    m = procs.run(cli(config, "capture", "--once", "-o", "json"), log, extra_env=env, timeout=7200,
                  cwd=config.parent)
    text = Path(m.log).read_text(errors="replace")
    out = json.loads(text[text.index("{"):text.rindex("}") + 1])  # the JSON summary (progress lines before it)
    return {**measured(m), "events": out["events"], "files": out["files"]}


def capture_runs(config: Path, env: dict, logs: Path, max_runs: int, budget_s: float) -> dict:
    """`capture --once` until the snapshot completed (or --max-runs / --capture-budget): every run's figures."""
    runs: list[dict] = []
    t = time.perf_counter()
    while len(runs) < max_runs and time.perf_counter() - t < budget_s:
        r = capture_once(config, env, logs / f"capture-after-ddl-{len(runs) + 1:03d}.log")
        state = snapshot_state(config)
        runs.append({**r, "state": state.get("state"), "snapshot_rows": state.get("rows", 0)})
        progress(f"capture --once #{len(runs)}: {r['s']} s, {r['events']} events, snapshot "
                 f"{state.get('state')} ({state.get('rows', 0):,} rows), load {r['load_avg']}")
        if state.get("state") == "completed":
            break
    wall = time.perf_counter() - t
    state = snapshot_state(config)
    return {"mode": "once", "runs": len(runs), "s": round(wall, 1), "state": state.get("state"),
            "snapshot_rows": state.get("rows", 0), "events": sum(r["events"] for r in runs),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in runs), "peak_pss_mb": max(r["peak_pss_mb"] for r in runs),
            "cpu_s": round(sum(r["cpu_s"] for r in runs), 1), "per_run": runs}


ROTATE_S = 5.0  # the continuous capture closes a file open this long (--rotate-seconds)
LANDED = re.compile(r"^landed \S+: (\d+) events", re.M)


def capture_continuous(config: Path, env: dict, logs: Path, budget_s: float) -> dict:
    """One continuous `capture` until the snapshot completed (or --capture-budget), then a rotation's wait (the
    open file closes: a stop leaves the records of open files to the next run) and SIGTERM."""
    t = time.perf_counter()
    log = logs / "capture-continuous.log"
    proc, fh = procs.start(cli(config, "capture", "--rotate-seconds", str(ROTATE_S)), log, env)
    rss = procs.PeakRss(proc.pid)
    completed_s = None
    try:
        while time.perf_counter() - t < budget_s:
            if proc.poll() is not None:
                raise RuntimeError(f"capture exited {proc.returncode}; log {log}")
            if snapshot_state(config).get("state") == "completed":
                completed_s = time.perf_counter() - t
                time.sleep(ROTATE_S + 3)
                break
            time.sleep(2)
        cpu = rss.cpu_seconds
    finally:
        procs.stop(proc)
        fh.close()
        rss.stop()
    state = snapshot_state(config)
    return {"mode": "continuous", "runs": 1, "completed_s": round(completed_s, 1) if completed_s else None,
            "s": round(completed_s or time.perf_counter() - t, 1), "stopped_s": round(time.perf_counter() - t, 1),
            "state": state.get("state"), "snapshot_rows": state.get("rows", 0),
            "events": sum(int(n) for n in LANDED.findall(log.read_text(errors="replace"))),
            "peak_rss_mb": round(rss.peak / 2**20), "peak_pss_mb": round(rss.peak_pss_mb), "cpu_s": round(cpu, 1)}


def baseline(config: Path, env: dict, logs: Path, landing: Path, res: dict) -> None:
    """The first load: `capture --once` (the initial snapshot) and `bootstrap` (every table type)."""
    res["initial_capture"] = {**capture_once(config, env, logs / "capture-initial.log")}
    res["initial_capture"]["landed_files"], res["initial_capture"]["landed_bytes"] = tree(landing, ".avro")
    progress(f"capture --once (initial snapshot): {res['initial_capture']}")
    m = procs.run(cli(config, "bootstrap"), logs / "bootstrap.log", extra_env=env, timeout=7200, cwd=config.parent)
    res["bootstrap"] = {**measured(m), "phases": phases_by_table(m.log)}
    progress(f"bootstrap: {res['bootstrap']}")


def ddl(pg, rows: int) -> dict:
    """The ALTER TABLE (timed), then one INSERT: the first change after it, which carries the new schema."""
    import psycopg

    with psycopg.connect(pg.dsn("bench"), autocommit=True) as conn:
        t = time.perf_counter()
        conn.execute(DDL)
        ddl_s = time.perf_counter() - t
        conn.execute(f"INSERT INTO {TABLE} SELECT {SELECT} FROM (SELECT %s::bigint AS g) s",
                     (rows + 1,))
    return {"sql": DDL, "s": round(ddl_s, 3)}


def data_files(table: Path) -> dict[Path, int]:
    """A lake table's base and log files (a MoR log's name starts with a dot; no .crc, no partition metadata)."""
    return {p: p.stat().st_size for p in table.rglob("*") if p.is_file() and ".hoodie" not in p.parts
            and not p.name.endswith(".crc") and not p.name.startswith(".hoodie_partition_metadata")}


def stream_and_verify(config: Path, env: dict, logs: Path, lake: Path, kind: str) -> dict:
    """`stream --once` of one table type (data files and bytes it added), then `verify` of it."""
    table = lake / f"{TABLE}_{kind}"
    before = data_files(table)
    m = procs.run(cli(config, "stream", "--table", TABLE, "--type", kind, "--once"), logs / f"stream-{kind}.log",
                  extra_env=env, timeout=7200, cwd=config.parent)
    after = data_files(table)
    new = [p for p in after if p not in before or after[p] != before[p]]
    out = {"stream": {**measured(m), "phases": round_phases(m.log), "files_written": len(new),
                      "bytes_written": sum(after[p] for p in new), "table_files": len(after),
                      "table_bytes": sum(after.values())}}
    progress(f"stream --once {kind}: {out['stream']}")
    v = procs.run(cli(config, "verify", "--table", TABLE, "--type", kind, "-o", "json"), logs / f"verify-{kind}.log",
                  extra_env=env, check=False, timeout=7200, cwd=config.parent)
    text = Path(v.log).read_text(errors="replace")
    try:
        doc = json.loads(text[text.index("{"):text.rindex("}") + 1])
    except ValueError:
        doc = {"error": text.strip().splitlines()[-1:] if text.strip() else "no output"}
    out["verify"] = {**measured(v), "rc": v.rc, "equal": doc.get("equal"), "db_rows": doc.get("db_rows"),
                     "lake_rows": doc.get("lake_rows"), "score_compared": "score" in (doc.get("columns") or []),
                     **({} if doc.get("equal") else {"detail": doc})}
    progress(f"verify {kind}: {out['verify']}")
    return out


def ratios(res: dict, kinds: list[str]) -> None:
    """The re-take against the first load: (capture of the snapshot + the stream rounds) / (capture + bootstrap)."""
    first = res["initial_capture"]["s"] + res["bootstrap"]["s"]
    again = res["capture_after_ddl"]["s"] + sum(res[k]["stream"]["s"] for k in kinds)
    res["ratio_retake_over_first_load"] = round(again / first, 2) if first else None
    rows = res["capture_after_ddl"]["snapshot_rows"]
    res["capture_after_ddl"]["rows_per_s"] = round(rows / res["capture_after_ddl"]["s"]) if rows else 0
    res["initial_capture"]["rows_per_s"] = round(res["rows"] / res["initial_capture"]["s"])
    res["ratio_capture_retake_over_initial"] = round(res["capture_after_ddl"]["s"] / res["initial_capture"]["s"], 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--types", default="mor", help="table types, comma-separated: mor, cow (default mor)")
    ap.add_argument("--capture", choices=["once", "continuous"], default="continuous",
                    help="after the DDL: one continuous capture until the snapshot completed (default), or capture "
                    "--once runs (on PostgreSQL each carries out a chunk or none)")
    ap.add_argument("--max-runs", type=int, default=500, help="--capture once: at most this many runs")
    ap.add_argument("--capture-budget", type=float, default=7200, help="seconds of capture after the DDL at most")
    ap.add_argument("--chunk-size", type=int, help="source.database.snapshot_chunk_size (default: the pipeline's)")
    ap.add_argument("--work", default="/work/bench-data/add-column")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    return run(args, argv)


def run(args, argv) -> int:
    kinds = [k.strip() for k in args.types.split(",") if k.strip()]
    work = procs.fresh_work(args.work)
    logs = work / "logs"
    logs.mkdir()
    given = argv if argv is not None else sys.argv[1:]
    res: dict = {"command": "python -m benchmarks.add_column " + " ".join(given), "machine": report.machine(),
                 "rows": args.rows, "types": kinds, "work": str(work)}
    load = LoadAverage()
    pg, password = bench_pg.bench_postgres(work)
    env = {**procs.env(), bench_pg.PASSWORD_ENV: password}
    try:
        res["table_load_s"] = round(bench_pg.load_customers(pg, COLUMNS, SELECT, args.rows), 1)
        progress(f"{args.rows:,} rows inserted in {res['table_load_s']} s")
        config = init_pipeline(work, pg, env, kinds, args.chunk_size)
        from hudi_cdc.config import load_pipeline
        from hudi_cdc.sources.tables import database

        pipeline = load_pipeline(config)
        res["snapshot_chunk_size"] = database(pipeline).snapshot_chunk_size
        res["flush_size"] = database(pipeline).flush_size
        landing = Path(pipeline.source_root.replace("file://", ""))
        lake = Path(pipeline.lake_root.replace("file://", ""))
        baseline(config, env, logs, landing, res)
        report.save(res, args.out)
        res["ddl"] = ddl(pg, args.rows)
        progress(f"DDL: {res['ddl']}")
        files0, bytes0 = tree(landing, ".avro")
        if args.capture == "once":
            res["capture_after_ddl"] = capture_runs(config, env, logs, args.max_runs, args.capture_budget)
        else:
            res["capture_after_ddl"] = capture_continuous(config, env, logs, args.capture_budget)
        after = res["capture_after_ddl"]
        if after["state"] == "completed" and after["events"] < after["snapshot_rows"]:  # records left in open files
            after["tail"] = capture_once(config, env, logs / "capture-tail.log")
            progress(f"capture --once (what the stopped capture left): {after['tail']}")
        files1, bytes1 = tree(landing, ".avro")
        res["capture_after_ddl"].update(landed_files=files1 - files0, landed_bytes=bytes1 - bytes0)
        brief = {k: v for k, v in res["capture_after_ddl"].items() if k != "per_run"}
        progress(f"capture after the DDL: {json.dumps(brief)}")
        report.save(res, args.out)
        if res["capture_after_ddl"]["state"] != "completed":
            raise RuntimeError(f"the incremental snapshot did not complete: {res['capture_after_ddl']['state']}; "
                               f"logs in {logs}")
        for kind in kinds:
            res[kind] = stream_and_verify(config, env, logs, lake, kind)
            report.save(res, args.out)
        ratios(res, kinds)
    finally:
        res["load_average"] = load.stop()
        pg.remove()
        report.save(res, args.out)
    return report.finish(res, args.out)


if __name__ == "__main__":
    sys.exit(main())
