"""The real-DeltaStreamer engine's pieces that need no JVM: runtime readiness, schemas, argv."""


import fastavro
import pytest

from hudi_cdc import sample
from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.errors import ConfigError, DataError, EnvironmentProblem
from hudi_cdc.runners.deltastreamer import runtime, submit


def pipeline(tmp, version="0.14.0", **table):
    return parse_pipeline({
        "pipeline": "t", "hudi": {"version": version}, "source": {"root": str(tmp / "landing")},
        "lake": {"root": str(tmp / "lake")},
        "tables": {"artists": {"topic": "moma.public.artists", "record_key": "artist_id",
                               "partition_field": "nationality", **table}}}, "t.yaml", str(tmp))


def test_runtime_not_prepared_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HUDI_CDC_HOME", str(tmp_path))
    assert not runtime.is_ready()
    with pytest.raises(EnvironmentProblem, match="scripts/install-deltastreamer.sh") as exc:
        runtime.load()
    assert "\n" not in str(exc.value)


def test_schema_files_come_from_the_newest_landed_file(tmp_path):
    p = pipeline(tmp_path)
    with pytest.raises(DataError, match="no landed .avro files"):
        submit.write_schema_files(p, "artists", "MERGE_ON_READ", tmp_path / "schemas")
    sample.land_snapshot(tmp_path / "landing", tables=("artists",), per_file=20000)
    src, tgt = submit.write_schema_files(p, "artists", "MERGE_ON_READ", tmp_path / "schemas")
    src_schema = fastavro.schema.load_schema(str(src))
    names = [f["name"] for f in fastavro.schema.load_schema(str(tgt))["fields"]]
    assert names == [f["name"] for f in src_schema["fields"]] + ["_hoodie_is_deleted"]
    soft = submit.target_schema(sample.schema("artists"), hard_deletes=False)
    assert "_hoodie_is_deleted" not in [f["name"] for f in soft["fields"]]


def test_v014_flags(tmp_path):
    p = pipeline(tmp_path)
    flags = render.streamer_flags(p, render.Job("artists", "MERGE_ON_READ", "UPSERT", True), "file:///x.properties")
    assert flags[flags.index("--payload-class") + 1] == "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    assert flags[flags.index("--source-ordering-field") + 1] == "__lsn"
    assert flags[flags.index("--target-table") + 1] == "artists"
    assert "org.apache.hudi.utilities.schema.FilebasedSchemaProvider" in flags
    props = render.table_properties(p, "artists", "MERGE_ON_READ")
    assert "hoodie.compact.inline=" not in props and "hoodie.compact.inline.max.delta.commits=5" in props
    with pytest.raises(ConfigError, match="one field only"):
        render.streamer_flags(pipeline(tmp_path, ordering_field=["__lsn", "__source_ts_ms"]),
                              render.Job("artists", "COPY_ON_WRITE", "UPSERT"), "file:///x.properties")


def test_registry_profile_sets_the_empty_schemaconverter(tmp_path):
    source = {"root": "s3://b/t", "schema_registry": "http://r/apis/ccompat/v7"}
    p = parse_pipeline({**pipeline(tmp_path).model_dump(), "source": source}, "t.yaml", str(tmp_path))
    props = render.table_properties(p, "artists", "COPY_ON_WRITE")
    assert "hoodie.streamer.schemaprovider.registry.schemaconverter=\n" in props


def test_run_jobs_refuses_other_versions(tmp_path):
    with pytest.raises(ConfigError, match="0.14.0 only"):
        submit.run_jobs(pipeline(tmp_path, version="1.2.0"), [render.Job("artists", "COPY_ON_WRITE", "UPSERT")], "x")


def test_completed_instants_and_checkpoint(tmp_path):
    hoodie = tmp_path / ".hoodie"
    hoodie.mkdir()
    (hoodie / "001.deltacommit").write_text('{"extraMetadata": {"deltastreamer.checkpoint.key": "5"}}')
    (hoodie / "002.commit").write_text('{"extraMetadata": {}}')  # a compaction stores no checkpoint
    (hoodie / "003.deltacommit.inflight").write_text("")
    inst = submit.completed_instants(tmp_path)
    assert inst == [("001", "deltacommit"), ("002", "commit")]
    assert submit.checkpoint(tmp_path, inst) == "5"
