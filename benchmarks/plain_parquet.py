"""The baseline: Spark writing the landed snapshot as plain partitioned Parquet (spark-submit'ed by
benchmarks/scenarios.py with the very Spark settings hudi-cdc's bootstrap runs with).

    spark-submit ... benchmarks/plain_parquet.py <landing topic dir> <output dir> <partition column>
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from pyspark.sql import SparkSession

    src, out, partition = argv
    spark = SparkSession.builder.appName("bench-plain-parquet").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    df = spark.read.format("avro").load(src)
    df.write.mode("overwrite").partitionBy(partition).parquet(out)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
