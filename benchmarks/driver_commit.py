"""What a small MoR commit costs when the driver makes it (issue 38): Hudi's Java write client
(`HoodieJavaWriteClient.upsertPreppedRecords`, no Spark job for the write) beside the two things hudi-cdc does
today, in one warm JVM on one table, alternated:

- `round`: hudi-cdc's whole round (`run_targets`: the landed file read, keys located, the write, the logged keys)
  of --changes events from benchmarks/stream.py's generator (updates, moves, deletes, inserts); since session 50
  its write is the driver's (jobs/stream/driver_write.py: the located records collected into the driver JVM,
  Hudi's Java write client), not the prepped Spark write;
- `spark write`: only the write of a round, Hudi's Spark datasource with --changes prepped updates (the records
  carry their file groups, as hudi-cdc's located rounds do) and hudi-cdc's writer options;
- `driver commit`: the same kind of prepped updates through Hudi's Java write client in the driver: records made
  from the rows (one small Spark job: `to_avro`), a delta commit appended to the located file groups' logs and
  completed with the round's extra metadata;
- `driver round`: a whole round of --changes generated events without a Spark job (DriverRound): the landed file
  read with fastavro, the keys' stored rows with hudi-rs, the records made over py4j, one delta commit by the Java
  write client; `driver round, JVM records`: the same with the file read and the records made in the JVM in one
  call (JvmRecords).

CPU seconds are the driver JVM's and this process's (the whole application). At the end the table is read
with hudi-rs and by Hudi's Spark datasource and compared with every event written: a commit the readers
do not take fails the benchmark.

    python -m benchmarks.driver_commit [--rows 5000] [--changes 20] [--rounds 6] [--work DIR] [--out F]

The Java write client (`org.apache.hudi:hudi-java-client`, the Spark bundle's Hudi version) is among hudi-cdc's
local jars (toolchain/jars.py), fetched from Maven Central into the jar cache on first use.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks import procs, report, stream  # noqa: E402
from benchmarks.lake import Variant  # noqa: E402

KINDS = ("round", "spark write", "driver commit", "driver round", "driver round, JVM records")


def session(work: Path, conf: dict[str, str] | None = None):
    """The warm local session of these probes (hudi-cdc's local settings, G1), plus `conf`."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hudi_cdc.common.spark_conf import HUDI_SESSION_CONF, configure, local_conf
    from hudi_cdc.config.settings import CURRENT_HUDI
    from hudi_cdc.toolchain import jars

    paths = jars.ensure_jars(CURRENT_HUDI)  # the Java write client among them
    builder = (SparkSession.builder.master("local[2]").appName("bench-driver-commit")
               .config("spark.jars", ",".join(str(p) for p in paths)).config("spark.driver.memory", "2g")
               .config("spark.sql.warehouse.dir", str(work / "warehouse"))
               .config("spark.driver.extraJavaOptions", "-XX:+UseG1GC"))
    spark = configure(configure(configure(builder, local_conf()), HUDI_SESSION_CONF), conf or {}).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Clock:
    """Wall and CPU seconds of the application: the driver JVM (its /proc stat) and this Python process."""

    def __init__(self, spark):
        self.pid = spark._jvm.java.lang.ProcessHandle.current().pid()

    def cpu(self) -> float:
        with open(f"/proc/{self.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        own = resource.getrusage(resource.RUSAGE_SELF)
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") + own.ru_utime + own.ru_stime


def targets(v: Variant):
    from hudi_cdc.config import load_pipeline
    from hudi_cdc.core import render
    from hudi_cdc.jobs import streamer

    p = load_pipeline(str(v.config))
    props = v.work / "props"
    render.write_properties(p, props)
    out = {}
    for op in ("BULK_INSERT", "UPSERT"):
        path = props / render.props_filename(p, stream.TABLE, v.table_type)
        flags = render.streamer_flags(p, render.Job(stream.TABLE, v.table_type, op), f"file://{path}")
        for kv in render.LOCAL_HOODIE_CONF:
            flags += ["--hoodie-conf", kv]
        out[op] = streamer.parse_argv(flags)[0]
    return out


class Updates:
    """Prepped updates of stored keys: the stored rows with a new name and a higher __lsn, their Hudi meta
    columns kept (each record's file group), as hudi-cdc's located rounds hand them to Hudi."""

    def __init__(self, spark, base: str, model: dict, rng: random.Random):
        self.spark, self.base, self.model, self.rng = spark, base, model, rng

    def frame(self, count: int, lsn: int):
        from pyspark.sql import functions as F

        keys = self.rng.sample(sorted(k for k, v in self.model.items() if v[1] is not None), count)
        stored = self.spark.read.format("hudi").load(self.base).where(F.col(stream.KEY).isin(keys))
        name = F.concat(F.lit("customer "), F.col(stream.KEY).cast("string"), F.lit(f" v{lsn}"))
        df = stored.withColumn("name", name) \
            .withColumn("__lsn", F.lit(lsn).cast("long")).withColumn("__op", F.lit("u"))
        for k in keys:
            self.model[k] = (self.model[k][0], f"customer {k} v{lsn}", lsn)
        # rows of their own, as located.py's join gives them (Hudi refuses a prepped write projected from its
        # own relation: "cannot modify hudi meta col")
        from pyspark.sql.types import StructField, StructType

        schema = StructType([StructField(f.name, f.dataType, f.nullable) for f in df.schema.fields])  # no metadata
        return self.spark.createDataFrame(df.collect(), schema).cache()


def spark_write(df, opts: dict[str, str], base: str) -> None:
    from hudi_cdc.jobs.stream.evolve import SET_NULL_OPTION
    from hudi_cdc.jobs.stream.located import PREPPED_OPTION

    opts = {k: v for k, v in opts.items() if k != SET_NULL_OPTION}  # as round.py's located write (Hudi refuses it)
    df.write.format("hudi").options(**opts, **{PREPPED_OPTION: "true", "hoodie.datasource.write.operation": "upsert"}) \
        .mode("append").save(base)


class DriverCommit:
    """Hudi's Java write client on the Spark driver's JVM (py4j), over the Spark session's Hadoop configuration."""

    def __init__(self, spark, base: str, opts: dict[str, str]):
        jvm = spark._jvm
        self.spark, self.jvm, self.base = spark, jvm, base
        conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration())
        meta = jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder().setConf(conf).setBasePath(base).build()
        self.schema_json = jvm.org.apache.hudi.common.table.TableSchemaResolver(meta).getTableSchema(False).toString()
        self.schema = jvm.org.apache.avro.Schema.Parser().parse(self.schema_json)
        props = jvm.java.util.HashMap()
        for k, v in opts.items():
            props.put(k, v)
        # the inserts of a prepped delta commit are bulk inserted; the Java client knows none of Spark's
        # repartitioning sort modes (hudi-cdc renders PARTITION_PATH_REPARTITION for its bootstraps)
        props.put("hoodie.bulkinsert.sort.mode", "NONE")
        config = jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder().withPath(base).withProps(props) \
            .withSchema(self.schema_json).build()
        context = jvm.org.apache.hudi.client.common.HoodieJavaEngineContext(conf)
        self.client = jvm.org.apache.hudi.client.HoodieJavaWriteClient(context, config)

    def commit(self, df, ordering: str, extra: dict[str, str]) -> str:
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import to_avro

        jvm = self.jvm
        data = [c for c in df.columns if not c.startswith("_hoodie_") or c == "_hoodie_is_deleted"]
        rows = df.select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name", "_hoodie_commit_time",
                         F.col(ordering).alias("__ord"),
                         to_avro(F.struct(*data), self.schema_json).alias("__avro")).collect()
        records = jvm.java.util.ArrayList()
        for r in rows:
            avro = jvm.org.apache.hudi.avro.HoodieAvroUtils.bytesToAvro(bytearray(r["__avro"]), self.schema)
            records.add(self.record(r["_hoodie_record_key"], r["_hoodie_partition_path"], avro, r["__ord"], r.asDict()))
        return self.commit_records(records, extra)

    def record(self, key: str, partition: str, avro, ordering, location: dict | None = None):
        """A HoodieAvroRecord of `avro` (a GenericRecord); with `location` (the stored row's Hudi meta columns),
        prepped to update or delete it in its file group, else an insert Hudi places."""
        m = self.jvm.org.apache.hudi.common.model
        rec = m.HoodieAvroRecord(m.HoodieKey(key, partition), m.DefaultHoodieRecordPayload(avro, ordering))
        if location is not None:
            rec.unseal()
            rec.setCurrentLocation(m.HoodieRecordLocation(location["_hoodie_commit_time"],
                                                          location["_hoodie_file_name"].split("_")[0]))
            rec.seal()
        return rec

    def commit_records(self, records, extra: dict[str, str]) -> str:
        jvm = self.jvm
        instant = self.client.startCommit()
        self.client.transitionInflight(instant)  # the Java client's prepped delta commit does not do it itself
        statuses = self.client.upsertPreppedRecords(records, instant)
        meta = jvm.java.util.HashMap()
        for k, v in extra.items():
            meta.put(k, v)
        if not self.client.commit(instant, statuses, jvm.org.apache.hudi.common.util.Option.of(meta)):
            raise RuntimeError(f"the driver commit {instant} was not completed")
        return instant


class DriverRound:
    """A round without a Spark job: the landed file read with fastavro, the newest event per key kept, the keys'
    stored rows read with hudi-rs (a snapshot read: keys in logs count), events no newer than the stored row
    dropped, updates and deletes prepped to their file groups, a partition move as a delete where the row is and an
    insert where it goes, new keys as inserts, all in one delta commit by the Java write client."""

    def __init__(self, driver: DriverCommit, base: str, jvm_records: JvmRecords | None = None):
        import json

        import fastavro

        self.driver, self.base, self.jvm_records = driver, base, jvm_records
        self.schema = fastavro.parse_schema(json.loads(driver.schema_json))

    def _stored(self, keys) -> dict[str, dict]:
        """The stored rows of `keys` (record key -> its Hudi meta columns and ordering value), read with hudi-rs."""
        from hudi_cdc.lake.reader import read_arrow

        meta = ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_time", "_hoodie_file_name", "__lsn"]
        return {r["_hoodie_record_key"]: r for r in read_arrow(self.base).select(meta).to_pylist()
                if r["_hoodie_record_key"] in keys}

    def run(self, path: Path, extra: dict[str, str]) -> int:
        import io

        import fastavro

        with open(path, "rb") as fh:
            newest: dict = {}
            for e in fastavro.reader(fh):
                k = str(e[stream.KEY])
                if k not in newest or e["__lsn"] > newest[k]["__lsn"]:
                    newest[k] = e
        stored = self._stored(newest)
        if self.jvm_records is not None:  # the file read again, the keys' newest events and the records in the JVM
            lines = "\n".join(f"{k}\t{r['_hoodie_partition_path']}\t{r['_hoodie_commit_time']}\t"
                              f"{r['_hoodie_file_name'].split('_')[0]}\t{r['__lsn']}" for k, r in stored.items())
            records = self.jvm_records.build(path, self.driver.schema_json, lines)
            self.driver.commit_records(records, extra)
            return records.size()
        jvm = self.driver.jvm
        records = jvm.java.util.ArrayList()

        def add(e: dict, partition: str, deleted: bool, location: dict | None) -> None:
            buf = io.BytesIO()
            fastavro.schemaless_writer(buf, self.schema, {**e, "_hoodie_is_deleted": deleted})
            avro = jvm.org.apache.hudi.avro.HoodieAvroUtils.bytesToAvro(bytearray(buf.getvalue()), self.driver.schema)
            records.add(self.driver.record(str(e[stream.KEY]), partition, avro, e["__lsn"], location))

        for k, e in newest.items():
            s = stored.get(k)
            if s is not None and s["__lsn"] >= e["__lsn"]:
                continue  # no newer than the stored row (a redelivery)
            deleted = e["__deleted"] == "true"
            target = f"{stream.PARTITION}={e[stream.PARTITION]}"
            if s is None:
                if not deleted:
                    add(e, target, False, None)
            elif deleted or target == s["_hoodie_partition_path"]:
                add(e, s["_hoodie_partition_path"], deleted, s)
            else:  # a partition move
                add(e, s["_hoodie_partition_path"], True, s)
                add(e, target, False, None)
        self.driver.commit_records(records, extra)
        return records.size()


# A driver round's records made in the JVM in one call (compiled at run time by Janino, which Spark carries): py4j
# costs half a dozen round trips per record made from Python (~3 s per 1,000 records), this one call per round.
# Its inputs: the landed file, the table's Avro schema, and the stored rows of the file's keys as text lines
# (key, partition path, instant, file id, ordering value, tab-separated).
RECORDS_JAVA = r"""
import java.util.*;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.file.DataFileReader;
import org.apache.hudi.common.model.*;
public class HudiCdcDriverRecords {
  private static HoodieAvroRecord record(Schema table, GenericRecord e, String key, String pp, boolean deleted,
                                         String[] stored, String orderingField) {
    GenericData.Record rec = new GenericData.Record(table);
    for (Iterator f = table.getFields().iterator(); f.hasNext();) {
      Schema.Field field = (Schema.Field) f.next();
      if (e.getSchema().getField(field.name()) != null) rec.put(field.name(), e.get(field.name()));
    }
    rec.put("_hoodie_is_deleted", Boolean.valueOf(deleted));
    HoodieAvroRecord r = new HoodieAvroRecord(new HoodieKey(key, pp),
        new DefaultHoodieRecordPayload(rec, (Comparable) e.get(orderingField)));
    if (stored != null) {
      r.unseal();
      r.setCurrentLocation(new HoodieRecordLocation(stored[2], stored[3]));
      r.seal();
    }
    return r;
  }
  public static List build(String path, String schemaJson, String keyField, String partitionField,
                           String orderingField, String storedLines) throws Exception {
    Schema table = new Schema.Parser().parse(schemaJson);
    Map stored = new HashMap();
    for (String line : storedLines.split("\\n")) {
      if (line.length() > 0) { String[] f = line.split("\\t"); stored.put(f[0], f); }
    }
    DataFileReader reader = new DataFileReader(new java.io.File(path), new GenericDatumReader());
    Map newest = new LinkedHashMap();
    while (reader.hasNext()) {
      GenericRecord e = (GenericRecord) reader.next();
      String key = String.valueOf(e.get(keyField));
      GenericRecord old = (GenericRecord) newest.get(key);
      if (old == null || ((Long) e.get(orderingField)).longValue() > ((Long) old.get(orderingField)).longValue()) {
        newest.put(key, e);
      }
    }
    reader.close();
    List out = new ArrayList();
    for (Iterator it = newest.entrySet().iterator(); it.hasNext();) {
      Map.Entry en = (Map.Entry) it.next();
      String key = (String) en.getKey();
      GenericRecord e = (GenericRecord) en.getValue();
      String[] s = (String[]) stored.get(key);
      long lsn = ((Long) e.get(orderingField)).longValue();
      if (s != null && Long.parseLong(s[4]) >= lsn) continue;  // no newer than the stored row
      boolean deleted = "true".equals(String.valueOf(e.get("__deleted")));
      String target = partitionField + "=" + e.get(partitionField);
      if (s == null) {
        if (!deleted) out.add(record(table, e, key, target, false, null, orderingField));
      } else if (deleted || target.equals(s[1])) {
        out.add(record(table, e, key, s[1], deleted, s, orderingField));
      } else {  // a partition move: deleted where it is, inserted where it goes
        out.add(record(table, e, key, s[1], true, s, orderingField));
        out.add(record(table, e, key, target, false, null, orderingField));
      }
    }
    return out;
  }
}
"""


class JvmRecords:
    """RECORDS_JAVA compiled once in the driver JVM; `build` is one py4j call per round."""

    def __init__(self, spark):
        jvm = spark._jvm
        compiler = jvm.org.codehaus.janino.SimpleCompiler()
        compiler.setParentClassLoader(jvm.java.lang.Thread.currentThread().getContextClassLoader())
        compiler.cook(RECORDS_JAVA)
        cls = compiler.getClassLoader().loadClass("HudiCdcDriverRecords")
        gw = spark.sparkContext._gateway
        types = gw.new_array(jvm.java.lang.Class, 6)
        for i in range(6):
            types[i] = jvm.java.lang.Class.forName("java.lang.String")
        self.method, self.gw, self.jvm = cls.getMethod("build", types), gw, jvm

    def build(self, path: Path, schema_json: str, stored_lines: str):
        args = self.gw.new_array(self.jvm.java.lang.Object, 6)
        for i, v in enumerate([str(path), schema_json, stream.KEY, stream.PARTITION, "__lsn", stored_lines]):
            args[i] = v
        return self.method.invoke(None, args)


def apply_events(model: dict, events: list[dict]) -> None:
    """The table hudi-cdc must hold after `events`: per key the newest __lsn wins, a delete included (model:
    key -> (country, name, lsn), a deleted key's name None)."""
    for e in sorted(events, key=lambda e: e["__lsn"]):
        k = e[stream.KEY]
        if k in model and model[k][2] >= e["__lsn"]:
            continue  # no newer than what the table holds (a redelivered snapshot event)
        deleted = e["__deleted"] == "true"
        model[k] = (e[stream.PARTITION], None if deleted else e["name"], e["__lsn"])


def check(spark, base: str, model: dict) -> dict:
    from hudi_cdc.lake.reader import read_arrow

    want = {k: name for k, (_, name, _) in model.items() if name is not None}
    rs = {r[stream.KEY]: r["name"] for r in read_arrow(base).select([stream.KEY, "name"]).to_pylist()}
    sp = {r[0]: r[1] for r in spark.read.format("hudi").load(base).select(stream.KEY, "name").collect()}
    out = {"rows": len(want), "hudi-rs differs": sum(1 for k in want.keys() | rs.keys() if want.get(k) != rs.get(k)),
           "spark differs": sum(1 for k in want.keys() | sp.keys() if want.get(k) != sp.get(k))}
    if out["hudi-rs differs"] or out["spark differs"]:
        raise SystemExit(f"the table is not what was written: {out}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=6, help="measured rounds of each kind (after one warm-up each)")
    ap.add_argument("--work", default="/work/bench-data/driver-commit")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    work = procs.fresh_work(args.work)
    landing = stream.Landing(work / "landing")
    # ordering values above 2^31, as a busy PostgreSQL's LSNs are: py4j hands a smaller Python int to Java as an
    # Integer, and a delete block's Integer ordering value cannot be compared with the stored Long (a product
    # would make the records in the JVM; this benchmark makes them over py4j)
    stream.SNAPSHOT_LSN = 2**32 + 1_000
    src = stream.Stream(args.rows, next_lsn=stream.SNAPSHOT_LSN + 1)
    model: dict = {}
    snapshot = [r for batch in src.snapshot_batches(2) for r in batch]
    landing.land_many(snapshot, 2)
    apply_events(model, snapshot)
    v = Variant(work / "mor", work / "landing", "MERGE_ON_READ", compaction_delta_commits=1000).write()
    ts = targets(v)
    spark = session(work)
    clock = Clock(spark)
    from hudi_cdc.jobs.stream.main import run_targets
    from hudi_cdc.jobs.stream.props import target_properties
    from hudi_cdc.jobs.stream.round import writer_options

    quiet = lambda m: None  # noqa: E731
    run_targets(spark, [ts["BULK_INSERT"]], quiet)
    base = ts["UPSERT"].target_base_path
    opts = writer_options(target_properties(ts["UPSERT"]), ts["UPSERT"])
    updates = Updates(spark, base, model, random.Random(3))
    driver = DriverCommit(spark, base, opts)
    driver_round, aside = DriverRound(driver, base), stream.Landing(work / "landing-driver")
    jvm_round = DriverRound(driver, base, JvmRecords(spark))
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in KINDS}
    phases: list[dict] = []
    for i in range(args.rounds + 1):
        for kind in KINDS:
            lsn = src.next_lsn  # the prepped updates take the generator's next ordering value: newer than
            src.next_lsn += 1  # every event before them, older than every event after
            if kind == "round":
                events, _ = src.changes(args.changes)
                landing.land(events)
                apply_events(model, events)
                start, cpu = time.monotonic(), clock.cpu()
                res = run_targets(spark, [ts["UPSERT"]], quiet)
                phases.append(res[0].phases)
            elif kind.startswith("driver round"):  # its own landing folder: hudi-cdc's rounds never read these files
                events, _ = src.changes(args.changes)
                landed = aside.land(events)
                apply_events(model, events)
                start, cpu = time.monotonic(), clock.cpu()
                (driver_round if kind == "driver round" else jvm_round).run(landed, {"streamer.bench.lsn": str(lsn)})
            else:
                df = updates.frame(args.changes, lsn)
                start, cpu = time.monotonic(), clock.cpu()
                if kind == "spark write":
                    spark_write(df, opts, base)
                else:
                    driver.commit(df, "__lsn", {"streamer.bench.lsn": str(lsn)})
                df.unpersist()
            if i:  # the first round of each kind warms up
                samples[kind].append((time.monotonic() - start, clock.cpu() - cpu))
        print(f"[driver-commit] round {i}: " + ", ".join(f"{k} {s[-1][0]:.2f} s / {s[-1][1]:.2f} CPU s"
                                                         for k, s in samples.items() if s), flush=True)
    res = {"command": " ".join(["python -m benchmarks.driver_commit", *(argv or sys.argv[1:])]),
           "rows": args.rows, "changes": args.changes, "rounds": args.rounds,
           "check": check(spark, base, model), "samples": samples,
           "median": {k: {"wall_s": statistics.median(w for w, _ in s), "cpu_s": statistics.median(c for _, c in s)}
                      for k, s in samples.items()},
           "round_phases_median": {p: statistics.median(ph.get(p, 0.0) for ph in phases[1:])
                                   for p in sorted({p for ph in phases for p in ph})}}
    spark.stop()
    return report.finish(res, args.out)


if __name__ == "__main__":
    sys.exit(main())
