"""Every key and flag hudi-cdc renders exists in Hudi's own source (a typo would be ignored by Hudi).

The lists in tests/data/hudi-keys/ were extracted by scripts/extract_hudi_keys.py from Hudi's
sources jars on Maven Central (see each file's first line)."""

from pathlib import Path

import pytest

from hudi_cdc.config import load_pipeline, parse_pipeline
from hudi_cdc.core import render

DATA = Path(__file__).resolve().parents[1] / "data"


def known(version):
    keys, flags = set(), set()
    for f in (DATA / "hudi-keys").glob(f"{version}*.txt"):
        for line in f.read_text().splitlines():
            if line.startswith("key:"):
                keys.add(line[4:])
            elif line.startswith("flag:"):
                flags.add(line[5:])
    return keys, flags


def pipelines():
    seed = load_pipeline(DATA / "seed-pipeline.yaml")
    current = load_pipeline(Path(__file__).resolve().parents[2] / "hudi-cdc.yaml")
    # every optional branch of the current templates: registry, metastore, no partition, soft deletes
    full = parse_pipeline({
        "pipeline": "x", "source": {"root": "s3://b/topics", "schema_registry": "http://r/apis/ccompat/v7"},
        "lake": {"root": "s3://b/lake", "hive_database": "x", "hive_metastore": "thrift://h:9083"},
        "tables": {"a": {"topic": "t.a", "record_key": ["k1", "k2"], "partition_field": "p"},
                   "b": {"topic": "t.b", "record_key": "k", "deletes": "soft"}}}, "x.yaml", "/tmp")
    # the 0.14.0 profile (EMR 6.15), the MoMA pipeline and every optional branch
    v014 = parse_pipeline({**current.model_dump(), "hudi": {"version": "0.14.0"}}, "x.yaml", "/tmp")
    v014_full = parse_pipeline({**full.model_dump(), "hudi": {"version": "0.14.0"}}, "x.yaml", "/tmp")
    return [("0.9.0", seed), ("1.2.0", current), ("1.2.0", full), ("0.14.0", v014), ("0.14.0", v014_full)]


IDS = ["seed", "moma", "all-options", "v014-moma", "v014-all-options"]


@pytest.mark.parametrize("version,pipeline", pipelines(), ids=IDS)
def test_rendered_keys_exist_in_hudi_source(version, pipeline):
    keys, _ = known(version)
    for name, text in render.render_properties(pipeline).items():
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key = line.split("=", 1)[0].strip()
            if key == "include":
                continue
            assert key in keys, f"{name}: {key} is not a config key of Hudi {version}"


@pytest.mark.parametrize("version,pipeline", pipelines(), ids=IDS)
def test_rendered_flags_exist_in_hoodie_streamer(version, pipeline):
    _, flags = known(version)
    # HoodieStreamer's flags: with its engine (on EMR 7 the default is hudi-cdc's streamer, same flags)
    pipeline = pipeline.model_copy(update={"hudi": pipeline.hudi.model_copy(update={"engine": "hoodiestreamer"})})
    for target in ("emr", "emr-serverless"):
        for table, tt in pipeline.targets():
            for op, cont in (("BULK_INSERT", False), ("UPSERT", True)):
                argv = render.streamer_argv(pipeline, table, tt, op, target=target, props_uri="s3://b/p.properties",
                                            continuous=cont)
                app = argv.index(render.profile(pipeline).emr_app_jar)
                for arg in argv[app + 1:]:
                    if arg.startswith("--"):
                        assert arg in flags, f"{arg} is not a HoodieStreamer flag of Hudi {version}"


def test_key_list_is_real():
    keys, flags = known("1.2.0")
    assert {"hoodie.table.ordering.fields", "hoodie.record.merge.mode", "hoodie.streamer.source.dfs.root"} <= keys
    assert "hoodie.tabel.name" not in keys and "--filter-dupes" in flags


def test_local_deltastreamer_keys_and_flags_exist_in_hudi_014():
    """What the local HoodieDeltaStreamer 0.14.0 engine adds on the command line exists in 0.14.0."""
    from hudi_cdc.runners.deltastreamer import submit

    keys, flags = known("0.14.0")
    assert {submit.SOURCE_SCHEMA_KEY, submit.TARGET_SCHEMA_KEY} <= keys
    assert "--post-write-termination-strategy-class" in flags
    assert {kv.split("=", 1)[0] for kv in render.LOCAL_HOODIE_CONF} <= keys
    # 0.14 silently ignores the current profile's ordering keys, so v014 must not render them
    assert not {"hoodie.table.ordering.fields", "hoodie.record.merge.mode"} & keys
