"""Read Hudi tables with the Hudi 0.14.0 runtime hudi-cdc's 0.14 engine installs (pyspark 3.4.3 + the
hudi-spark3.4-bundle 0.14.0: the Hudi release Athena's reader is built on), in ONE spark-submit for
several reads. Each read is (base path, query type: snapshot | read_optimized); the rows come back as
dicts (values as JSON gives them: dates and timestamps as strings), or {"error": its last cause line}."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hudi_cdc.runners.deltastreamer import runtime
from hudi_cdc.spark.launch import spark_env

SCRIPT = '''
import json, sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").appName("hudi-014-reader")
         .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
         .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
         .config("spark.ui.enabled", "false").getOrCreate())
out = {}
for path, query_type in json.loads(sys.argv[1]):
    try:
        df = spark.read.format("hudi").option("hoodie.datasource.query.type", query_type).load(path)
        out[path + "#" + query_type] = [json.loads(r) for r in df.toJSON().collect()]
    except Exception as exc:  # the reader's refusal, as one line: {"error": ...}
        causes = [ln.strip() for ln in str(exc).splitlines() if "Exception" in ln]
        out[path + "#" + query_type] = {"error": (causes[-1] if causes else str(exc).splitlines()[0])[:500]}
print("HUDI014 " + json.dumps(out))
'''


def read_with_hudi_014(tmp: Path, reads: list[tuple[str, str]], timeout: float = 600) -> dict[tuple[str, str], list]:
    rt = runtime.load()
    script = tmp / "hudi014_read.py"
    script.write_text(SCRIPT)
    bundle = [str(j) for j in rt.jars if "bundle" in j.name]
    env = spark_env(spark_home=rt.spark_home, java_home=rt.java().resolve().parent.parent, python=str(rt.python),
                    drop=("PYTHONPATH",), force_local_ip=True)
    argv = [str(rt.spark_submit), "--master", "local[1]", "--driver-memory", "1g", "--jars", ",".join(bundle),
            str(script), json.dumps([list(r) for r in reads])]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("HUDI014 ")), None)
    assert proc.returncode == 0 and line, f"Hudi 0.14.0 read failed ({proc.returncode}): {proc.stderr[-3000:]}"
    got = json.loads(line[len("HUDI014 "):])
    return {(p, q): got[f"{p}#{q}"] for p, q in reads}
