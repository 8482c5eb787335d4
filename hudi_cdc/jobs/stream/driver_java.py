"""The Java side of the driver's rounds (driver_write.py, driver_round.py): one helper class compiled at run time by
Janino, which Spark carries, so the per-record work is one py4j call a round (py4j costs several round trips per
object made from Python)."""

from __future__ import annotations

import threading
import weakref

from hudi_cdc.common.causes import root_cause

_CLIENT = "org.apache.hudi.client.HoodieJavaWriteClient"

# The per-record work, one py4j call a round (py4j costs several round trips per object made from
# Python). Compiled at run time by Janino, which Spark carries; raw types: Janino's generics are partial.
_JAVA = r"""
import java.util.*;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.file.DataFileStream;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.hudi.avro.AvroRecordContext;
import org.apache.hudi.avro.HoodieAvroUtils;
import org.apache.hudi.common.fs.FSUtils;
import org.apache.hudi.common.model.HoodieKey;
import org.apache.hudi.common.model.HoodieRecordLocation;
import org.apache.hudi.common.schema.HoodieSchema;
import org.apache.hudi.common.table.HoodieTableConfig;
import org.apache.hudi.common.table.read.DeleteContext;
import org.apache.hudi.common.util.ConfigUtils;
import org.apache.hudi.common.util.HoodieRecordUtils;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.config.HoodieWriteConfig;
public class HudiCdcDriverWrite {
  public static String mismatch(StructType frame, HoodieSchema writer) {
    DataType want = org.apache.hudi.HoodieSchemaConversionUtils.convertHoodieSchemaToDataType(writer);
    if (frame.sameType(want)) return null;
    return "the round's columns are not the table's: " + frame.simpleString() + " against " + want.simpleString();
  }
  public static InternalRow[] collect(Dataset ds) {
    return (InternalRow[]) ds.queryExecution().executedPlan().executeCollect();
  }
  public static Dataset frame(Dataset ds, InternalRow[] rows) {
    StructType st = ds.schema();
    scala.Function1 toRow = org.apache.spark.sql.catalyst.CatalystTypeConverters.createToScalaConverter(st);
    List out = new ArrayList(rows.length);
    for (int i = 0; i < rows.length; i++) out.add(toRow.apply(rows[i]));
    return ds.sparkSession().createDataFrame(out, st);
  }
  // driver_round.py: the landed files' records (read with `readerJson`, Avro's resolution) as one binary column of
  // a local relation: from_avro and every projection over it are computed while Spark plans, with no job
  public static Dataset landed(SparkSession spark, String[] paths, String readerJson) throws Exception {
    Schema reader = new Schema.Parser().parse(readerJson);
    org.apache.hadoop.conf.Configuration conf = spark.sparkContext().hadoopConfiguration();
    GenericDatumWriter out = new GenericDatumWriter(reader);
    List rows = new ArrayList();
    BinaryEncoder enc = null;
    for (int i = 0; i < paths.length; i++) {
      org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(paths[i]);
      java.io.InputStream in = path.getFileSystem(conf).open(path);
      try {
        DataFileStream records = new DataFileStream(in, new GenericDatumReader(null, reader));
        while (records.hasNext()) {
          java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
          enc = EncoderFactory.get().binaryEncoder(bytes, enc);
          out.write(records.next(), enc);
          enc.flush();
          rows.add(RowFactory.create(new Object[]{bytes.toByteArray()}));
        }
      } finally {
        in.close();
      }
    }
    return spark.createDataFrame(rows, new StructType().add("value", DataTypes.BinaryType));
  }
  // driver_round.py: the located records, a local relation: Hudi's five meta columns then the first `data` columns
  // of an event row, `_hoodie_is_deleted` (column `deletedAt`) set for a moved key's delete where it was. `plan`, one
  // JSON text (one py4j call): {"picks": [event row], "deleted": [bool], "meta": [[five values or null]]}
  public static Dataset located(Dataset events, InternalRow[] rows, String plan, int deletedAt, int data,
                                String[] metaNames) throws Exception {
    com.fasterxml.jackson.databind.JsonNode p =
        (com.fasterxml.jackson.databind.JsonNode) new com.fasterxml.jackson.databind.ObjectMapper().readTree(plan);
    com.fasterxml.jackson.databind.JsonNode picks = node(p, "picks");
    com.fasterxml.jackson.databind.JsonNode metas = node(p, "meta");
    com.fasterxml.jackson.databind.JsonNode deleted = node(p, "deleted");
    StructType in = events.schema();
    StructType st = new StructType();
    for (int m = 0; m < metaNames.length; m++) st = st.add(metaNames[m], DataTypes.StringType, true);
    for (int j = 0; j < data; j++) st = st.add(in.fields()[j]);
    scala.Function1 toRow = org.apache.spark.sql.catalyst.CatalystTypeConverters.createToScalaConverter(st);
    int nm = metaNames.length;
    List out = new ArrayList(picks.size());
    for (int i = 0; i < picks.size(); i++) {
      Object[] vals = new Object[nm + data];
      com.fasterxml.jackson.databind.JsonNode meta = at(metas, i);
      for (int m = 0; m < nm; m++) {
        com.fasterxml.jackson.databind.JsonNode v = at(meta, m);
        vals[m] = v.isNull() ? null : UTF8String.fromString(v.asText());
      }
      InternalRow r = rows[at(picks, i).asInt()];
      for (int j = 0; j < data; j++) vals[nm + j] = r.isNullAt(j) ? null : r.get(j, in.fields()[j].dataType());
      if (at(deleted, i).asBoolean()) vals[nm + deletedAt] = Boolean.TRUE;
      out.add(toRow.apply(new GenericInternalRow(vals)));
    }
    return events.sparkSession().createDataFrame(out, st);
  }
  // Janino takes TreeNode's get, not JsonNode's covariant one
  static com.fasterxml.jackson.databind.JsonNode node(com.fasterxml.jackson.databind.JsonNode n, String name) {
    return (com.fasterxml.jackson.databind.JsonNode) n.get(name);
  }
  static com.fasterxml.jackson.databind.JsonNode at(com.fasterxml.jackson.databind.JsonNode n, int i) {
    return (com.fasterxml.jackson.databind.JsonNode) n.get(i);
  }
  public static List records(Dataset ds, InternalRow[] rows, HoodieSchema writer, HoodieWriteConfig config,
                             HoodieTableConfig table) {
    StructType st = ds.schema();
    scala.Function1 toAvro = org.apache.hudi.AvroConversionUtils.createInternalRowToAvroConverter(st, writer, false);
    Schema data = org.apache.hudi.common.schema.HoodieSchemaUtils.removeMetadataFields(writer).getAvroSchema();
    DeleteContext deletes = new DeleteContext(ConfigUtils.getMergeProps(config.getProps(), table), writer)
        .withReaderSchema(writer);
    boolean requiresPayload = !config.isFileGroupReaderBasedMergeHandle();
    String payload = config.getPayloadClass();
    List out = new ArrayList(rows.length);
    for (int i = 0; i < rows.length; i++) {
      GenericRecord rec = (GenericRecord) toAvro.apply(rows[i]);
      boolean isDelete = AvroRecordContext.getFieldAccessorInstance().isDeleteRecord(rec, deletes);
      Object instant = rec.get("_hoodie_commit_time");
      Object file = rec.get("_hoodie_file_name");
      Option location = instant != null && file != null
          ? Option.of(new HoodieRecordLocation(instant.toString(), FSUtils.getFileId(file.toString())))
          : Option.empty();
      HoodieKey key = new HoodieKey(rec.get("_hoodie_record_key").toString(),
                                    rec.get("_hoodie_partition_path").toString());
      out.add(HoodieRecordUtils.createHoodieRecord(HoodieAvroUtils.rewriteRecord(rec, data), key, payload, location,
                                                   requiresPayload, Boolean.valueOf(isDelete)));
    }
    return out;
  }
}
"""

_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # SparkContext -> the helper class or why not
_lock = threading.Lock()


def helper(spark):
    """The compiled helper class, or why there is none (a str: no Java client on a cluster's classpath)."""
    sc = spark.sparkContext
    with _lock:
        if sc not in _compiled:
            jvm = spark._jvm
            loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
            try:
                jvm.java.lang.Class.forName(_CLIENT, False, loader)
            except Exception:  # noqa: BLE001 - the job's jars lack it: Spark writes every round
                _compiled[sc] = f"no {_CLIENT} on the driver's classpath"
                return _compiled[sc]
            compiler = jvm.org.codehaus.janino.SimpleCompiler()
            compiler.setParentClassLoader(loader)
            compiler.cook(_JAVA)
            _compiled[sc] = compiler.getClassLoader().loadClass("HudiCdcDriverWrite")
        return _compiled[sc]


def call(spark, cls, name: str, *args):
    """Call a static method of the compiled helper by reflection (its class is not on py4j's path)."""
    gw = spark.sparkContext._gateway
    jvm = spark._jvm
    method = next(m for m in cls.getMethods() if m.getName() == name)
    arr = gw.new_array(jvm.java.lang.Object, len(args))
    for i, a in enumerate(args):
        arr[i] = a
    try:
        return method.invoke(None, arr)
    except Exception as exc:  # InvocationTargetException: the helper's own error is its cause
        raise RuntimeError(root_cause(exc)) from exc
