"""Benchmark: `hudi-cdc inspect commits` (hudi-rs, no JVM) against Hudi's JVM reading the same commits.

hudi-cli 1.x bundles cannot be fetched from the Maven repository this project reaches, so the JVM side
is what hudi-cli's `commits show` does, run through the Hudi 1.2.0 Spark bundle: a Python process
that starts Spark (local[1], driver 1g) with the bundle and its SQL extensions, registers the table and
runs `CALL show_commits(...)`, the procedure that carries hudi-cli's `commits show` logic.

Both sides are measured as whole processes (start to exit), alternating, several runs each; the
report gives each median and the ratio, measured in the same run of this script.

    python benchmarks/inspect_commits.py [--path TABLE] [--runs 5] [--output json]

Without --path the v9 MoR fixture table (shared/fixtures/hudi-tables/sample_table/mor/avro/
v9_txns_simple_nometa.zip: 13 write instants, compaction, clustering) is unzipped into a temp dir.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ZIP = ROOT.parent / "shared" / "fixtures" / "hudi-tables" / "sample_table" / "mor" / "avro" / \
    "v9_txns_simple_nometa.zip"


def jvm_show_commits(path: str) -> None:
    """The JVM side, run in its own process: Spark + Hudi bundle, `CALL show_commits`, print JSON."""
    from pyspark.sql import SparkSession

    sys.path.insert(0, str(ROOT))
    from hudi_cdc.common.spark_conf import configure
    from hudi_cdc.toolchain.jars import ensure_jars

    warehouse = tempfile.mkdtemp(prefix="bench-warehouse-")
    builder = (SparkSession.builder.master("local[1]").appName("bench-show-commits")
               .config("spark.jars", ",".join(str(p) for p in ensure_jars("1.2.0")))
               .config("spark.driver.memory", "1g")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.warehouse.dir", warehouse))
    spark = configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        spark.sql(f"CREATE TABLE bench USING hudi LOCATION '{path}'")
        rows = [r.asDict() for r in spark.sql("CALL show_commits(table => 'bench', limit => 100000)").collect()]
        print(json.dumps(rows, default=str))
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)


def timed(argv) -> tuple:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def last_json(stdout: str):
    """The JSON document a process printed (Spark may print other lines before it)."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        return json.loads(next(ln for ln in reversed(stdout.splitlines()) if ln.startswith("[{")))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", help="Hudi table base path (default: the v9 MoR fixture, unzipped)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--output", choices=["text", "json"], default="text")
    ap.add_argument("--jvm-once", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.jvm_once:
        jvm_show_commits(args.jvm_once)
        return 0

    tmp = None
    path = args.path
    if not path:
        tmp = tempfile.mkdtemp(prefix="bench-inspect-")
        with zipfile.ZipFile(DEFAULT_ZIP) as zf:
            zf.extractall(tmp, [m for m in zf.namelist() if not m.startswith("__MACOSX/")])
        path = str(Path(tmp) / DEFAULT_ZIP.stem)
    rs_argv = [sys.executable, "-m", "hudi_cdc.cli", "inspect", "commits", "--path", path, "--output", "json"]
    jvm_argv = [sys.executable, str(Path(__file__).resolve()), "--jvm-once", path]
    try:
        # one untimed warm-up of each (page cache, jar cache), then alternate
        _, rs_out = timed(rs_argv)
        _, jvm_out = timed(jvm_argv)
        ours = [r["requested_time"] for r in last_json(rs_out)]
        theirs = sorted(r["commit_time"] for r in last_json(jvm_out))
        if ours != theirs:
            raise SystemExit(f"the two sides disagree on the commits: {ours} vs {theirs}")
        rs_times, jvm_times = [], []
        for _ in range(args.runs):
            rs_times.append(timed(rs_argv)[0])
            jvm_times.append(timed(jvm_argv)[0])
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    rs_median, jvm_median = statistics.median(rs_times), statistics.median(jvm_times)
    result = {
        "table": path if args.path else f"{DEFAULT_ZIP.relative_to(ROOT.parent)} (unzipped)",
        "commits": len(ours),
        "runs": args.runs,
        "hudi_cdc_inspect_commits_s": [round(t, 3) for t in rs_times],
        "jvm_show_commits_s": [round(t, 3) for t in jvm_times],
        "hudi_cdc_median_s": round(rs_median, 3),
        "jvm_median_s": round(jvm_median, 3),
        "ratio_jvm_over_hudi_cdc": round(jvm_median / rs_median, 1),
    }
    if args.output == "json":
        print(json.dumps(result, indent=2))
    else:
        print(f"table: {result['table']} ({result['commits']} completed write instants), {args.runs} runs each")
        print(f"hudi-cdc inspect commits (hudi-rs): median {rs_median:.3f} s  {result['hudi_cdc_inspect_commits_s']}")
        print(f"JVM: Spark + Hudi 1.2.0 show_commits: median {jvm_median:.3f} s  {result['jvm_show_commits_s']}")
        print(f"ratio (JVM / hudi-cdc): {result['ratio_jvm_over_hudi_cdc']}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
