"""The Spark driver of `hudi-cdc apply --engine iceberg`: run the rendered Spark SQL statements
(hudi_cdc/sinks, templates/sql/spark) in order on a session with Iceberg's runtime.

spark-submit runs this file with one argument, a JSON file:
  {"table": T, "statements": [{"name": N, "sql": S}, ...], "report": {"stage": ..., "target": ...},
   "salt_env": the variable a shaped table's hash reads through Spark's ${env:...}, or null}
and it prints one RESULT line (counts of the staged events, files and target rows) or ERROR line.
Light on purpose: stdlib + pyspark + hudi_cdc's stdlib-only modules.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

from hudi_cdc.common.causes import root_cause
from hudi_cdc.errors import ExitCode

RESULT_MARK = "HUDI_CDC_RESULT "
ERROR_MARK = "HUDI_CDC_ERROR "


def _mark(mark: str, payload) -> None:
    print(mark + json.dumps(payload), flush=True)


def run(spark, plan: dict, log=print) -> dict:
    report = plan["report"]
    result: dict = {"table": plan["table"], "statements": []}
    for st in plan["statements"]:
        started = time.time()
        spark.sql(st["sql"])
        result["statements"].append({"name": st["name"], "seconds": round(time.time() - started, 2)})
        log(f"{plan['table']}: {st['name']} ({time.time() - started:.1f}s)")
        if st["name"] == "stage":
            row = spark.sql(f"SELECT COUNT(*) AS n, COUNT(DISTINCT __file) AS f FROM {report['stage']}").first()
            result["staged_events"], result["staged_files"] = int(row.n), int(row.f)
    result["target_rows"] = int(spark.sql(f"SELECT COUNT(*) AS n FROM {report['target']}").first().n)
    snap = spark.sql(f"SELECT snapshot_id FROM {report['target']}.snapshots ORDER BY committed_at DESC LIMIT 1").first()
    result["snapshot_id"] = int(snap.snapshot_id) if snap else None
    return result


def scrub(text: str, plan: dict) -> str:
    """``text`` without the hash salt (plan's salt_env: the variable a shaped table's hash reads, if any)."""
    salt = os.environ.get(plan.get("salt_env") or "")
    return text.replace(salt, "<salt>") if salt else text


def main(argv: list[str] | None = None) -> int:
    from pyspark.sql import SparkSession

    args = sys.argv[1:] if argv is None else argv
    with open(args[0]) as fh:
        plan = json.load(fh)
    spark = SparkSession.builder.appName(f"hudi-cdc-iceberg-{plan['table']}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        result = run(spark, plan, log=lambda m: print("hudi-cdc: " + m, flush=True))
    except Exception as exc:
        _mark(ERROR_MARK, {"message": scrub(root_cause(exc), plan), "kind": "job"})
        if not plan.get("salt_env"):
            raise
        # Spark's errors quote the statement after its ${env:...} substitution: the salt stays out of the log
        print(scrub(traceback.format_exc(), plan), file=sys.stderr, flush=True)
        return ExitCode.JOB
    _mark(RESULT_MARK, result)
    spark.stop()
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
