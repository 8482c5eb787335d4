"""The small shared modules: one-line causes, Maven coordinates, Java-properties dialects, timeline
file names, commit totals, Hudi's Spark settings (no JVM, no network)."""

from __future__ import annotations

import re

import pytest

from hudi_cdc.common import causes, instants, properties, spark_conf
from hudi_cdc.lake.metadata import write_totals
from hudi_cdc.toolchain.maven import Artifact

PY4J = """An error occurred while calling o123.save.
: org.apache.hudi.exception.HoodieUpsertException: Failed to upsert for commit time 20250101
\tat org.apache.hudi.table.action.commit.BaseWriteHelper.write(BaseWriteHelper.java:80)
Caused by: org.apache.hudi.exception.HoodieException: wrapped
\tat org.apache.hudi.X(X.java:1)
Caused by: java.io.IOException: No space left on device
\tat java.io.FileOutputStream.write(Native Method)
"""


def test_root_cause_is_the_deepest_caused_by():
    assert causes.root_cause(PY4J) == "java.io.IOException: No space left on device"
    assert causes.root_cause(PY4J.splitlines()) == "java.io.IOException: No space left on device"


def test_root_cause_without_caused_by_is_the_last_exception_line():
    log = ["24/01/01 10:00:00 INFO Starting", "24/01/01 10:00:01 ERROR Main: java.lang.IllegalStateException: bad",
           "\tat Main.run(Main.java:3)"]
    assert causes.root_cause(log) == "java.lang.IllegalStateException: bad"
    assert causes.root_cause([]) == "no output"
    assert causes.root_cause(["just words", "more words"]) == "just words"


def test_one_line_message_is_its_own_root_cause():
    msg = "Hudi write to db.t (/lake/t) failed: org.apache.hudi.exception.HoodieException: boom"
    assert causes.root_cause(RuntimeError(msg)) == msg


def test_first_line():
    assert causes.first_line(ValueError("\n  first  \nsecond")) == "first"
    assert causes.first_line(ValueError("")) == "ValueError"
    assert causes.first_line(ValueError("x" * 50), limit=10) == "x" * 10


def test_error_lines_pick_errors_and_skip_frames():
    out = "starting\nERROR boom\n  at a.b(C.java:1)\nCaused by: java.io.IOException: x\ndone\n"
    assert causes.error_lines(out, re.compile(r"ERROR|Caused by")) == "ERROR boom | Caused by: java.io.IOException: x"
    assert causes.error_lines("a\nb\n", re.compile("ERROR"), keep=1) == "b"
    assert causes.error_lines("", re.compile("x"), empty="(empty log)") == "(empty log)"


def test_maven_coordinates_with_and_without_classifier():
    jar = Artifact("org.apache.spark", "spark-avro_2.12", "3.5.5")
    assert jar.coords == "org.apache.spark:spark-avro_2.12:3.5.5:jar"
    assert jar.url.endswith("/org/apache/spark/spark-avro_2.12/3.5.5/spark-avro_2.12-3.5.5.jar")
    tgz = Artifact("io.apicurio", "apicurio-registry-app", "3.3.3", "tar.gz", "all")
    assert tgz.coords == "io.apicurio:apicurio-registry-app:3.3.3:tar.gz:all"
    assert tgz.filename == "apicurio-registry-app-3.3.3-all.tar.gz"


def test_java_properties_escapes_and_separators():
    text = "# c\n! c\nhoodie.table.name=t\nhoodie.a\\:b : v\\:w\nhoodie.path=s3\\://b/p\n"
    assert properties.parse_properties(text) == {"hoodie.table.name": "t", "hoodie.a:b": "v:w",
                                                 "hoodie.path": "s3://b/p"}


def test_java_properties_unicode_escapes_continuations_and_whitespace_separator():
    """What java.util.Properties.store writes for non-ASCII text (\\uXXXX), a value continued on the next
    line (leading blanks of the continuation dropped), a blank as separator, and a later key winning."""
    text = ("hoodie.table.comment=caf\\u00e9 \\u2013 na\\u00efve\n"
            "hoodie.table.recordkey.fields=a,\\\n    b,\\\n    c\n"
            "hoodie.table.name artists\n"
            "hoodie.tab\\ key=x\\ty\n"
            "hoodie.table.name=artists_cow\n")
    assert properties.parse_properties(text) == {
        "hoodie.table.comment": "caf\u00e9 \u2013 na\u00efve", "hoodie.table.recordkey.fields": "a,b,c",
        "hoodie.table.name": "artists_cow", "hoodie.tab key": "x\ty"}


def test_java_properties_round_trip_what_java_writes():
    """javaproperties.dumps writes as java.util.Properties.store does (escapes, \\u); reading it back is exact."""
    import javaproperties

    props = {"hoodie.path": "s3://b/p=1", "k:ey": "v\u00e9\nline two", " lead": "trail "}
    assert properties.parse_properties(javaproperties.dumps(props, timestamp=False)) == props


def test_properties_stays_stdlib_at_import():
    """The job imports properties.py for load_properties; parsing hoodie.properties is the CLI side's."""
    import subprocess
    import sys

    code = ("import sys; import hudi_cdc.common.properties as p; "
            "assert 'javaproperties' not in sys.modules; p.parse_properties('a=b'); "
            "assert 'javaproperties' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_streamer_properties_include_cycle_and_missing_file(tmp_path):
    (tmp_path / "a.properties").write_text("include=b.properties\n")
    (tmp_path / "b.properties").write_text("include=a.properties\n")
    with pytest.raises(properties.PropertiesError, match="include cycle"):
        properties.load_properties(str(tmp_path / "a.properties"))
    with pytest.raises(properties.PropertiesError, match="nope.properties: properties file not found"):
        properties.load_properties(f"file://{tmp_path}/nope.properties")


@pytest.mark.parametrize("name,expected", [
    ("20250101000000000_20250101000001000.commit", ("20250101000000000", "commit", "COMPLETED", "20250101000001000")),
    ("20211230132628.deltacommit", ("20211230132628", "deltacommit", "COMPLETED", None)),
    ("20250101000000000.compaction.requested", ("20250101000000000", "commit", "REQUESTED", None)),
    ("20211230132628.inflight", ("20211230132628", "commit", "INFLIGHT", None)),
])
def test_instant_file_names(name, expected):
    i = instants.parse_instant_file(name)
    assert (i.requested_time, i.action, i.state, i.completion_time) == expected


def test_completed_writes_of_names():
    names = ["20250101000000000_20250101000001000.commit", "20250101000002000.deltacommit.inflight",
             "20250101000003000_20250101000004000.clean", "hoodie.properties"]
    assert [i.requested_time for i in instants.completed_writes_of(names)] == ["20250101000000000"]


def test_write_totals_sum_every_partition():
    meta = {"partitionToWriteStats": {"a": [{"numWrites": 3, "numInserts": 2, "numUpdateWrites": 1,
                                             "totalWriteBytes": 10}],
                                      "b": [{"numWrites": "4", "numDeletes": 1, "totalWriteErrors": 0}], "c": None}}
    assert write_totals(meta) == {"written": 7, "inserted": 2, "updated": 1, "deleted": 1, "bytes": 10, "errors": 0}
    assert write_totals({}) == {"written": 0, "inserted": 0, "updated": 0, "deleted": 0, "bytes": 0, "errors": 0}


def test_hudi_session_conf():
    pairs = spark_conf.as_pairs(spark_conf.HUDI_SESSION_CONF)
    assert "spark.sql.catalog.spark_catalog=org.apache.spark.sql.hudi.catalog.HoodieCatalog" in pairs
    assert set(spark_conf.HUDI_EXTENSION_CONF.items()) < set(spark_conf.HUDI_SESSION_CONF.items())
