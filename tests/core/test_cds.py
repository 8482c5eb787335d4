"""Class-data sharing for spark-submit's driver (hudi_cdc/spark/cds.py): the first run that ends well builds
the archive (one builder at a time, published by rename), later runs map it, through SPARK_SUBMIT_OPTS only.
The JVM side (a real dump and map) runs in every spark-submit of the suite; tests/core/test_launch.py and
the e2e tiers show the launches still work."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hudi_cdc.spark import cds


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("HUDI_CDC_HOME", str(tmp_path / "home"))
    spark, java = tmp_path / "spark", tmp_path / "java"
    (spark / "jars").mkdir(parents=True)
    (spark / "jars" / "spark-core.jar").write_bytes(b"x" * 10)
    java.mkdir()
    (java / "release").write_text('JAVA_VERSION="17.0.15"\n')
    return {"SPARK_HOME": str(spark), "JAVA_HOME": str(java), "SPARK_SUBMIT_OPTS": "-Dmine=1"}


def _option(e: dict) -> str:
    return e["SPARK_SUBMIT_OPTS"].split()[-1]


def test_first_run_builds_then_later_runs_map_it(env):
    first = cds.plan(env)
    assert first.env["SPARK_SUBMIT_OPTS"].startswith("-Dmine=1 ")  # the user's own options kept
    assert _option(first.env).startswith("-XX:ArchiveClassesAtExit=")
    assert "SPARK_SUBMIT_OPTS" in env and env["SPARK_SUBMIT_OPTS"] == "-Dmine=1"  # the caller's env untouched
    other = cds.plan(env)  # while the first builds: no second builder, no archive to map
    assert other.env["SPARK_SUBMIT_OPTS"] == "-Dmine=1"
    assert first.building is not None and first.archive is not None
    first.building.write_bytes(b"archive")  # what the JVM dumps at exit
    first.finish(True)
    assert first.archive.read_bytes() == b"archive" and not first.building.exists()
    later = cds.plan(env)
    assert _option(later.env) == f"-XX:SharedArchiveFile={first.archive}"
    later.finish(True)
    assert first.archive.exists()


def test_a_failed_run_publishes_nothing_and_frees_the_claim(env):
    first = cds.plan(env)
    assert first.building is not None
    first.building.write_bytes(b"half")
    first.finish(False)
    assert not first.building.exists() and first.archive is not None and not first.archive.exists()
    assert _option(cds.plan(env).env).startswith("-XX:ArchiveClassesAtExit=")  # the next run builds


def test_a_stale_claim_is_taken_over(env):
    first = cds.plan(env)
    assert first.claim is not None
    old = time.time() - cds.CLAIM_STALE_SECONDS - 10
    os.utime(first.claim, (old, old))  # its builder died without finishing
    assert _option(cds.plan(env).env).startswith("-XX:ArchiveClassesAtExit=")


def test_the_claim_of_a_killed_builder_is_taken_over(env):
    first = cds.plan(env)
    assert first.claim is not None
    first.claim.write_text("999999999")  # a pid that does not run: its builder was killed (kill -9)
    half = first.claim.parent / first.claim.name.replace(".building", ".999999999.tmp")
    half.write_bytes(b"half")  # what it had dumped
    again = cds.plan(env)
    assert _option(again.env).startswith("-XX:ArchiveClassesAtExit=") and not half.exists()


def test_another_spark_or_java_is_another_archive(env, tmp_path):
    first = cds.plan(env)
    assert first.building is not None
    first.building.write_bytes(b"a")
    first.finish(True)
    (Path(env["SPARK_HOME"]) / "jars" / "hudi.jar").write_bytes(b"y")
    assert _option(cds.plan(env).env).startswith("-XX:ArchiveClassesAtExit=")
    (tmp_path / "conf").mkdir()
    conf = {**env, "SPARK_CONF_DIR": str(tmp_path / "conf")}
    assert _option(cds.plan(conf).env).startswith("-XX:ArchiveClassesAtExit=")


def test_a_non_empty_conf_dir_on_the_class_path_gets_no_archive(env, tmp_path):
    """The JDK refuses to dump a class path with a non-empty directory, failing the job at its exit."""
    for var in ("SPARK_CONF_DIR", "HADOOP_CONF_DIR", "YARN_CONF_DIR"):
        d = tmp_path / var
        d.mkdir()
        (d / "spark-defaults.conf").write_text("spark.sql.shuffle.partitions 4\n")
        assert cds.plan({**env, var: str(d)}).env["SPARK_SUBMIT_OPTS"] == "-Dmine=1", var
    (Path(env["SPARK_HOME"]) / "conf").mkdir()
    (Path(env["SPARK_HOME"]) / "conf" / "log4j2.properties").write_text("x")
    assert cds.plan(env).env["SPARK_SUBMIT_OPTS"] == "-Dmine=1"  # SPARK_HOME/conf when SPARK_CONF_DIR is unset


def test_off_or_unknown_spark_changes_nothing(env):
    assert cds.plan({**env, "HUDI_CDC_CDS": "0"}).env["SPARK_SUBMIT_OPTS"] == "-Dmine=1"
    assert cds.plan({"JAVA_HOME": env["JAVA_HOME"]}).env == {"JAVA_HOME": env["JAVA_HOME"]}
