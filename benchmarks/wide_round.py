"""What a small round of a wide table costs next to a narrow one (issue 38; jobs/stream/materialize.py).

    python -m benchmarks.wide_round [--columns 301] [--rows 5000] [--rounds 3] [--types mor,cow]
        [--work /work/bench-data/wide-round] [--out results.json]

A throwaway PostgreSQL 15 (benchmarks/pg.py) with two tables of --rows rows: `wide`, a key and --columns - 1
columns cycling through ten types (numeric, text, timestamptz, boolean, int, jsonb holding ~3 KB: TOASTed, date,
bigint, varchar, double precision), and `narrow`, the key and the first nine of them. As a user does it, each step
a whole process (procs.run): `init --from-database`, `capture --once`, `bootstrap`; then --rounds times, the
tables alternating: `UPDATE <table> SET c000 = c000 + 1 WHERE id <= 5` (the TOASTed columns left alone: 5 events,
Debezium's placeholder in each jsonb column, filled from the stored rows), `capture --once`, `stream --once
--table <table> --type <type>` (seconds, and the round's phases as the streamer logs them); at the end `verify` of
each table and type, which must say equal. Reported: each round, the medians, and the ratio wide / narrow of the
median round (the machine may be shared: read the ratio).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import yaml  # noqa: E402

from benchmarks import pg as bench_pg  # noqa: E402
from benchmarks import procs  # noqa: E402
from benchmarks.scenarios import round_phases  # noqa: E402

TYPES = {"mor": "MERGE_ON_READ", "cow": "COPY_ON_WRITE"}
# (SQL type, the value of row g) of column c<i>, cycling
KINDS = [("numeric(12,2)", "(g * 1.37)::numeric(12,2)"), ("text", "'t' || g"),
         ("timestamptz", "timestamptz '2024-03-10 01:30:00+00' + g * interval '37 minutes'"),
         ("boolean", "g % 2 = 0"), ("int", "g * 7"),
         # ~3 KB of md5 text, which pglz cannot compress: kept out of line (TOASTed)
         ("jsonb", "jsonb_build_object('g', g, 'doc', (SELECT string_agg(md5(g || '-' || i), '') "
                   "FROM generate_series(1, 96) i))"),
         ("date", "date '2020-01-01' + g"), ("bigint", "g::bigint * 1000000007"), ("varchar(40)", "'v' || g"),
         ("double precision", "g / 3.0")]


def progress(msg: str) -> None:
    print(f"[wide-round {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load(pg, table: str, columns: int, rows: int) -> None:
    """TABLE (id bigint key, c000 .. c<columns-2>) owned by `bench`, ROWS rows."""
    import psycopg

    kinds = [KINDS[i % len(KINDS)] for i in range(columns - 1)]
    ddl = ", ".join(["id bigint PRIMARY KEY", *[f"c{i:03d} {k[0]}" for i, k in enumerate(kinds)]])
    select = ", ".join(["g", *[k[1] for k in kinds]])
    with psycopg.connect(pg.dsn("bench"), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} ({ddl})")
        conn.execute(f"ALTER TABLE {table} OWNER TO bench")
        conn.execute(f"INSERT INTO {table} SELECT {select} FROM generate_series(1, {int(rows)}) g")


def update(pg, table: str) -> None:
    import psycopg

    with psycopg.connect(pg.dsn("bench"), autocommit=True) as conn:
        conn.execute(f"UPDATE {table} SET c000 = c000 + 1 WHERE id <= 5")


def prepare(work: Path, pg, env: dict, kinds: list[str]) -> Path:
    """`init --from-database` of both tables with the table types asked for; `capture --once`; `bootstrap`."""
    project = work / "p"
    procs.run(procs.hudi_cdc("init", str(project), "--from-database", "--dbname", "bench", "--user", "bench",
                             "--host", "127.0.0.1", "--port", str(pg.port), "--password-env", bench_pg.PASSWORD_ENV,
                             "--table", "wide", "--table", "narrow"),
              work / "logs" / "init.log", extra_env=env)
    config = project / "hudi-cdc.yaml"
    doc = yaml.safe_load(config.read_text())
    for t in doc["tables"].values():
        t["table_types"] = [TYPES[k] for k in kinds]
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    for step in (["capture", "--once"], ["bootstrap"]):
        m = procs.run(procs.hudi_cdc("--config", str(config), *step), work / "logs" / f"{step[0]}.log",
                      extra_env=env, cwd=project, timeout=7200)
        progress(f"{' '.join(step)}: {m.seconds:.1f} s")
    return config


def rounds(work: Path, pg, env: dict, config: Path, kinds: list[str], n: int) -> dict:
    """N rounds of 5 updates per table and type, the tables alternating: each round's seconds and phases."""
    out: dict = {}
    for i in range(n):
        for table in ("wide", "narrow"):
            update(pg, table)
            procs.run(procs.hudi_cdc("--config", str(config), "capture", "--once"),
                      work / "logs" / f"capture-{table}-{i}.log", extra_env=env, cwd=config.parent)
            for kind in kinds:
                log = work / "logs" / f"stream-{table}-{kind}-{i}.log"
                m = procs.run(procs.hudi_cdc("--config", str(config), "stream", "--once", "--table", table,
                                             "--type", kind), log, extra_env=env, cwd=config.parent)
                phases = round_phases(str(log))
                row = {"process_s": round(m.seconds, 1), "round_s": round(sum(phases.values()), 1), "phases": phases}
                out.setdefault(f"{table}/{kind}", []).append(row)
                progress(f"{table} {kind} round {i + 1}: {row['round_s']} s ({phases})")
    return out


def verify(work: Path, env: dict, config: Path, kinds: list[str]) -> dict[str, str]:
    out = {}
    for table in ("wide", "narrow"):
        for kind in kinds:
            m = procs.run(procs.hudi_cdc("--config", str(config), "verify", "--table", table, "--type", kind),
                          work / "logs" / f"verify-{table}-{kind}.log", extra_env=env, cwd=config.parent, check=False)
            text = Path(m.log).read_text(errors="replace")
            out[f"{table}/{kind}"] = "equal" if m.rc == 0 and ": equal" in text else f"NOT equal (exit {m.rc})"
    return out


def summary(results: dict, kinds: list[str]) -> dict:
    """Median round and process seconds per table and type, and the ratio wide / narrow of the median round."""
    med = {k: {"round_s": statistics.median(r["round_s"] for r in rows),
               "process_s": statistics.median(r["process_s"] for r in rows)} for k, rows in results.items()}
    ratio = {kind: round(med[f"wide/{kind}"]["round_s"] / max(med[f"narrow/{kind}"]["round_s"], 0.1), 2)
             for kind in kinds}
    return {"median": med, "ratio_wide_to_narrow": ratio}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--columns", type=int, default=301)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--types", default="mor,cow")
    ap.add_argument("--work", default="/work/bench-data/wide-round")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    kinds = [k.strip() for k in args.types.split(",") if k.strip()]
    work = procs.fresh_work(args.work)
    pg, password = bench_pg.bench_postgres(work)
    env = {bench_pg.PASSWORD_ENV: password}
    try:
        load(pg, "wide", args.columns, args.rows)
        load(pg, "narrow", 10, args.rows)
        progress(f"loaded wide ({args.columns} columns) and narrow (10 columns), {args.rows} rows each")
        config = prepare(work, pg, env, kinds)
        results = rounds(work, pg, env, config, kinds, args.rounds)
        report = {"columns": args.columns, "rows": args.rows, "rounds": results, **summary(results, kinds),
                  "verify": verify(work, env, config, kinds)}
    finally:
        pg.remove()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0 if all(v == "equal" for v in report["verify"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
