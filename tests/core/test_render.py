"""Rendered output: golden files, byte for byte, and the seed's own text where the seed gives it."""

import json
from pathlib import Path

import jinja2
import pytest

from hudi_cdc.config import load_pipeline
from hudi_cdc.core import render
from tests.shared import SHARED, require

HERE = Path(__file__).resolve().parents[1]  # tests/
ROOT = HERE.parent
SEED_TEXT = SHARED / "seeds" / "001_7fd0163274bfc305.txt"


@pytest.fixture(scope="module")
def seed():
    return load_pipeline(HERE / "data" / "seed-pipeline.yaml")


@pytest.mark.parametrize("table", ["artists", "artworks"])
def test_seed_properties_match_golden_byte_for_byte(seed, table):
    name = f"deltastreamer_{table}_apicurio_mor.properties"
    assert render.render_properties(seed)[name] == (HERE / "golden" / "seed" / name).read_text()


def test_seed_spark_submit_matches_golden(seed):
    golden = json.loads((HERE / "golden" / "seed" / "spark-submit.json").read_text())
    props = "s3://${DATA_LAKE_BUCKET}/hudi/deltastreamer_%s_apicurio_mor.properties"
    assert render.streamer_argv(seed, "artists", "MERGE_ON_READ", "UPSERT", target="emr",
                                props_uri=props % "artists", continuous=True) == golden["artists_mor_continuous_upsert"]
    assert render.streamer_argv(seed, "artworks", "MERGE_ON_READ", "BULK_INSERT", target="emr",
                                props_uri=props % "artworks") == golden["artworks_mor_bulk_insert"]


def test_golden_files_are_the_seed_text():
    """The golden files are the seed's text itself (the post's en dashes read as --)."""
    require(SEED_TEXT.exists(), f"seed 001 text not at {SEED_TEXT} (../shared/seeds beside the checkout)")
    text = SEED_TEXT.read_text(encoding="utf-8")
    for name in ("deltastreamer_artists_apicurio_mor.properties", "deltastreamer_artworks_apicurio_mor.properties"):
        assert (HERE / "golden" / "seed" / name).read_text().rstrip("\n") in text
    golden = json.loads((HERE / "golden" / "seed" / "spark-submit.json").read_text())
    flat = text.replace("\u2013", "--").replace(" \\\n", " ").replace('"', "")
    for argv in golden.values():
        assert " ".join(argv) in flat


def test_properties_dir_is_current():
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_example", ROOT / "scripts" / "render-example.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, text in render.render_properties(mod.example()).items():
        stale = f"properties/{name} is stale: run scripts/render-example.py"
        assert (ROOT / "properties" / name).read_text() == text, stale


def test_local_argv_is_a_list_with_one_jvm_for_all_jobs(tmp_path):
    p = load_pipeline(ROOT / "hudi-cdc.yaml")
    jobs = [render.Job(t, tt, "BULK_INSERT") for t, tt in p.targets()]
    argv = render.local_argv(p, jobs, tmp_path, ["/j/a.jar", "/j/b.jar"], "/x/streamer.py")
    assert argv[0] == "spark-submit" and argv.count("--next") == 3
    assert argv[argv.index("--jars") + 1] == "/j/a.jar,/j/b.jar"
    assert argv[argv.index("--master") + 1] == "local[2]"
    assert "spark.driver.bindAddress=127.0.0.1" in argv
    assert all(isinstance(a, str) and "\n" not in a for a in argv)


@pytest.mark.parametrize(("op", "continuous", "short"), [("UPSERT", False, True), ("UPSERT", True, False),
                                                          ("BULK_INSERT", False, False)])
def test_one_round_jvms_compile_less(tmp_path, op, continuous, short):
    """`stream --once` JVMs run C1 only with the parallel collector; bootstraps and continuous streams
    keep the default tiers (render.SHORT_ROUND_JAVA_OPTIONS); the pipeline's spark.conf still wins."""
    p = load_pipeline(ROOT / "hudi-cdc.yaml")
    argv = render.local_argv(p, [render.Job("artists", "COPY_ON_WRITE", op, continuous)], tmp_path, [], "/x/s.py")
    java = next(a for a in argv if a.startswith("spark.driver.extraJavaOptions="))
    assert ("-XX:TieredStopAtLevel=1" in java) is short
    p.spark.conf["spark.driver.extraJavaOptions"] = "-Xmx1g"
    argv = render.local_argv(p, [render.Job("artists", "COPY_ON_WRITE", op, continuous)], tmp_path, [], "/x/s.py")
    assert "spark.driver.extraJavaOptions=-Xmx1g" in argv



def test_many_tables_get_room_in_sparks_generated_code_cache(tmp_path):
    """40 generated classes per table job the application may write, when Spark's 100 is not enough; the
    pipeline's spark.conf still wins."""
    p = load_pipeline(ROOT / "hudi-cdc.yaml")  # 2 tables x 2 types
    job = [render.Job("artists", "MERGE_ON_READ", "UPSERT", True)]
    assert "spark.sql.codegen.cache.maxEntries=160" in render.local_argv(p, job, tmp_path, [], "/x/s.py")
    one = p.model_copy(update={"tables": {"artists": p.tables["artists"].model_copy(
        update={"table_types": ["MERGE_ON_READ"]})}})  # Spark's own 100 is room enough
    assert not [a for a in render.local_argv(one, job, tmp_path, [], "/x/s.py") if "codegen.cache" in a]
    many = p.model_copy(update={"tables": {**p.tables, **{f"t{i}": p.tables["artists"] for i in range(48)}}})
    assert "spark.sql.codegen.cache.maxEntries=4000" in render.local_argv(many, job, tmp_path, [], "/x/s.py")
    many.spark.conf["spark.sql.codegen.cache.maxEntries"] = "500"
    assert "spark.sql.codegen.cache.maxEntries=500" in render.local_argv(many, job, tmp_path, [], "/x/s.py")

def _hoodiestreamer(p):
    """The pipeline with hudi.engine hoodiestreamer (on EMR 7 the default is hudi-cdc's streamer)."""
    return p.model_copy(update={"hudi": p.hudi.model_copy(update={"engine": "hoodiestreamer"})})


def test_emr_current_profile_uses_emr_jars_and_streamer_class():
    p = _hoodiestreamer(load_pipeline(ROOT / "hudi-cdc.yaml").model_copy(update={"base_dir": "/x"}))
    argv = render.streamer_argv(p, "artists", "COPY_ON_WRITE", "UPSERT", target="emr", props_uri="s3://b/p",
                                continuous=True)
    assert argv[0] == "spark-submit" and argv[argv.index("--jars") + 1] == "/usr/lib/hudi/hudi-spark-bundle.jar"
    assert argv[argv.index("--source-ordering-field") + 1] == "__lsn"  # EMR 7's Hudi 1.0.2 flag
    assert argv[argv.index("--class") + 1] == "org.apache.hudi.utilities.streamer.HoodieStreamer"
    assert "--continuous" in argv and argv[-2:] == ["--op", "UPSERT"]


def test_templates_are_strict():
    env = render.env()
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("current/table.properties.j2").render(table="x")


def test_engine_for_each_target_and_version():
    from hudi_cdc.core.profiles import engine_for
    from hudi_cdc.errors import ConfigError

    assert engine_for("1.2.0", "local") == "hudi-cdc"
    assert engine_for("0.14.0", "local") == "hoodiestreamer"
    assert engine_for("1.2.0", "emr") == engine_for("1.2.0", "emr-serverless") == "hudi-cdc"
    assert engine_for("0.14.0", "emr") == engine_for("0.9.0", "emr-serverless") == "hoodiestreamer"
    with pytest.raises(ConfigError, match="hudi.version 0.9.0 .* cannot run locally"):
        engine_for("0.9.0", "local")
    with pytest.raises(ConfigError, match="hudi.engine hoodiestreamer cannot run locally for hudi.version 1.2.0"):
        engine_for("1.2.0", "local", "hoodiestreamer")
    # on AWS hudi-cdc's streamer is the EMR 7 profile's default, HoodieStreamer stays selectable
    assert engine_for("1.2.0", "emr", "hoodiestreamer") == "hoodiestreamer"
    assert engine_for("1.2.0", "emr", "hudi-cdc") == engine_for("1.2.0", "emr-serverless", "hudi-cdc") == "hudi-cdc"
    assert engine_for("0.14.0", "emr", "hoodiestreamer") == "hoodiestreamer"
    for version, release in (("0.14.0", "emr-6.15.0"), ("0.9.0", "emr-6.5.0")):
        with pytest.raises(ConfigError, match=f"hudi.engine hudi-cdc cannot run on emr for hudi.version {version}: "
                                              rf"its EMR release \({release}\) runs Python 3.7"):
            engine_for(version, "emr", "hudi-cdc")


def test_continuous_mor_on_emr_compacts_asynchronously():
    """HoodieStreamer refuses --continuous on MoR while the properties say hoodie.compact.inline=true."""
    p = _hoodiestreamer(load_pipeline(ROOT / "hudi-cdc.yaml"))
    cont = render.streamer_argv(p, "artists", "MERGE_ON_READ", "UPSERT", target="emr", props_uri="s3://b/p",
                                continuous=True)
    once = render.streamer_argv(p, "artists", "MERGE_ON_READ", "UPSERT", target="emr", props_uri="s3://b/p")
    cow = render.streamer_argv(p, "artists", "COPY_ON_WRITE", "UPSERT", target="emr", props_uri="s3://b/p",
                               continuous=True)
    assert cont[-2:] == ["--hoodie-conf", "hoodie.compact.inline=false"]
    assert "hoodie.compact.inline=false" not in once + cow
    assert "hoodie.compact.inline=true" in render.table_properties(p, "artists", "MERGE_ON_READ")
