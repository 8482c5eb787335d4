"""One command for the whole benchmark: generate a CDC stream at a chosen scale, land it as S3-sink
Avro files in a temporary lake, measure whole hudi-cdc processes (medians of --runs), write the report.

    python -m benchmarks.run [--rows 1000000] [--runs 3] [--scenarios bootstrap,upsert,...] [--out DIR]

Progress lines go to stderr; the report (report.md, PNG charts, results.json) to --out.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):  # python benchmarks/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks import report, scenarios  # noqa: E402

ORDER = ["bootstrap", "upsert", "compaction", "growth", "inspect", "latency"]


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="snapshot rows (default 1,000,000)")
    ap.add_argument("--runs", type=int, default=3, help="runs per measured figure; medians (default 3)")
    ap.add_argument("--scenarios", default=",".join(ORDER), help=f"comma-separated, of: {', '.join(ORDER)}")
    ap.add_argument("--out", default="benchmarks/results/latest", help="report folder")
    ap.add_argument("--work", help="working folder for lakes and logs (default: a temp dir, removed after)")
    ap.add_argument("--growth-sizes", help="table sizes of the growth scenario (default: rows/10,rows; "
                    "add 5000000 on demand)")
    ap.add_argument("--growth-changes", type=int, default=10_000, help="events of the growth round (default 10,000)")
    ap.add_argument("--growth-series", help="lookup choices of the growth scenario (default: all of "
                    "LOCATED,LOCATED_MOR,GLOBAL_SIMPLE,RECORD_INDEX,GLOBAL_BLOOM)")
    ap.add_argument("--growth-runs", type=int, help="runs per point of the growth scenario (default: --runs)")
    ap.add_argument("--latency-files", type=int, default=10, help="files landed in the latency scenario")
    ap.add_argument("--sync-interval", type=int, help="continuous mode interval (default: the pipeline default)")
    ap.add_argument("--keep", action="store_true", help="keep the working folder")
    args = ap.parse_args(argv)
    args.scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = set(args.scenarios) - set(ORDER)
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    progress = lambda msg: print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)  # noqa: E731
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="hudi-cdc-bench-"))
    sizes = ([int(s) for s in args.growth_sizes.split(",")] if args.growth_sizes
             else [max(1000, args.rows // 10), args.rows])
    ctx = scenarios.Ctx(rows=args.rows, runs=args.runs, work=work, progress=progress, growth_sizes=sizes,
                        growth_changes=args.growth_changes, latency_files=args.latency_files,
                        sync_interval=args.sync_interval, growth_runs=args.growth_runs or args.runs)
    if args.growth_series:
        ctx.growth_series = [s.strip() for s in args.growth_series.split(",") if s.strip()]
    results: dict = {"command": "python -m benchmarks.run " + shlex.join(argv if argv is not None else sys.argv[1:]),
                     "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     "machine": report.machine(), "rows": args.rows, "runs": args.runs, "work": str(work)}
    started = time.perf_counter()
    chosen = [s for s in ORDER if s in args.scenarios]
    progress(f"scenarios {', '.join(chosen)} at {args.rows:,} rows, {args.runs} run(s) each; work dir {work}")
    try:
        for name in chosen:
            if name != "bootstrap":
                scenarios.prepare(ctx, chosen)
            t = time.perf_counter()
            progress(f"== {name}")
            results[name] = scenarios.SCENARIOS[name](ctx)
            progress(f"== {name} done in {time.perf_counter() - t:.0f}s")
            results["elapsed_s"] = time.perf_counter() - started
            report.write(results, Path(args.out))  # after each scenario: a partial report survives a failure
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)
    path = report.write(results, Path(args.out))
    progress(f"report: {path}")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
