"""Typed columns for HoodieStreamer on EMR / EMR Serverless (runners/deltastreamer/typed_render.py): the
properties and schema files `hudi-cdc render` writes and the AWS runners upload, rendered from the newest
landed file's schema; golden files (tests/golden/typed_emr/; HUDI_CDC_UPDATE_GOLDEN=1 rewrites them, review
the diff). No JVM: tests/jobs/test_types_real.py runs the rendered properties on the real 0.14 engine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc.config import load_pipeline, uri_to_path
from hudi_cdc.core import render
from hudi_cdc.pipeline.plan import job_argvs
from hudi_cdc.runners.deltastreamer import typed_render
from tests.jobs.test_lake_types import SCHEMA

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "typed_emr"
ROOT = "s3://bucket/hudi-cdc/typed/properties"


def _pipeline(tmp_path: Path, version: str = "0.14.0", deletes: str = "hard", registry: str | None = None,
              land: bool = True):
    source: dict = {"root": "landing"}
    if registry:
        source["schema_registry"] = registry
    cfg = {"pipeline": "typed", "source": source, "lake": {"root": "lake", "hive_database": "typed"},
           "hudi": {"version": version, "engine": "hoodiestreamer"},
           "tables": {"t": {"topic": "db.public.t", "record_key": "id", "deletes": deletes}}}
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "hudi-cdc.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    p = load_pipeline(path)
    if land:
        topic = uri_to_path(p.topic_dir("t"))
        topic.mkdir(parents=True)
        fields = [f for f in SCHEMA["fields"] if f["name"] != "__lsn"]
        old = {**SCHEMA, "fields": [*fields, {"name": "gone", "type": ["null", "string"], "default": None}]}
        new = {**SCHEMA, "fields": [*fields, {"name": "__deleted", "type": ["null", "string"], "default": None},
                                    {"name": "__lsn", "type": ["null", "long"], "default": None}]}
        for i, schema in enumerate((old, new)):  # the older file's dropped column stays (schema_union.py)
            f = topic / f"db.public.t+0+{i:010d}.avro"
            with open(f, "wb") as fh:
                fastavro.writer(fh, fastavro.parse_schema(schema), [])
            os.utime(f, (1_700_000_000 + i, 1_700_000_000 + i))
    return p


def _check_golden(name: str, text: str, tmp_path: Path) -> None:
    text = text.replace(str(tmp_path), "<tmp>")
    path = GOLDEN / name
    if os.environ.get("HUDI_CDC_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), name


def test_rendered_properties_and_schemas_match_golden(tmp_path):
    p = _pipeline(tmp_path)
    lines: list[str] = []
    typed = typed_render.render_typed(p, ROOT, lines.append)
    assert typed.typed("t") and not lines
    names = ["t_cow.properties", "t_mor.properties", "t.source.avsc", "t_cow.target.avsc", "t_mor.target.avsc"]
    assert set(names) <= set(typed.files)
    for name in names:
        _check_golden(name, typed.files[name], tmp_path)
    props = typed.files["t_cow.properties"]
    sql = next(ln for ln in props.splitlines() if ln.startswith("hoodie.streamer.transformer.sql="))
    assert sum(ln.startswith("hoodie.streamer.transformer.sql=") for ln in props.splitlines()) == 1
    # one mapping: exactly the local 0.14 engine's SQL (submit.typed_from), columns typed, deletes kept
    assert "date_from_unix_date" in sql and "timestamp_micros" in sql and "AS _hoodie_is_deleted" in sql
    assert "`gone`" in sql
    assert f"hoodie.streamer.schemaprovider.target.schema.file={ROOT}/t_cow.target.avsc" in props
    target = json.loads(typed.files["t_cow.target.avsc"])
    by = {f["name"]: f["type"] for f in target["fields"]}
    assert by["d"] == ["null", {"type": "int", "logicalType": "date"}]
    assert by["n"][1]["logicalType"] == "decimal" and by["_hoodie_is_deleted"] == "boolean"
    # the source schema reads every Decimal as bytes (0.14's Avro source refuses them as written)
    source = {f["name"]: f["type"] for f in json.loads(typed.files["t.source.avsc"])["fields"]}
    assert "logicalType" not in source["n"][1]


def test_render_command_writes_them_and_the_argv_names_the_transformer(tmp_path):
    p = _pipeline(tmp_path, deletes="soft")
    out = tmp_path / "props"
    lines: list[str] = []
    rows = job_argvs(p, out, ROOT, "emr", lines.append)
    assert (out / "t.source.avsc").exists() and (out / "t_mor.target.avsc").exists()
    props = (out / "t_mor.properties").read_text()
    assert "_hoodie_is_deleted" not in props and "date_from_unix_date" in props
    for row in rows:
        argv = row["argv"]
        assert argv[argv.index("--transformer-class") + 1] == render.TRANSFORMER_CLASS, row["job"]
    # EMR Serverless renders the same files
    assert job_argvs(p, tmp_path / "props2", ROOT, "emr-serverless", lambda m: None) and \
        (tmp_path / "props2" / "t_mor.properties").read_text() == props
    # the local target (hudi-cdc's streamer, 1.2.0) and hudi.engine hudi-cdc on EMR are not affected
    assert not typed_render.applies(p, "local")


def test_nothing_landed_says_what_to_do_and_renders_rows_as_landed(tmp_path):
    p = _pipeline(tmp_path, deletes="soft", land=False)
    lines: list[str] = []
    typed = typed_render.render_typed(p, ROOT, lines.append)
    assert typed.no_landing == {"t"} and len(lines) == 1
    assert lines[0].startswith("t: no landed .avro file under ") and "hudi-cdc capture --once" in lines[0]
    assert "t.source.avsc" not in typed.files
    # the argv names the transformer, so the properties give it the identity SQL
    assert "hoodie.streamer.transformer.sql=SELECT * FROM <SRC>" in typed.files["t_cow.properties"]


def test_registry_and_seed_soft_deletes_stay_untyped_with_one_line(tmp_path):
    p = _pipeline(tmp_path / "r", registry="http://registry:8080/apis/ccompat/v7")
    lines: list[str] = []
    typed = typed_render.render_typed(p, ROOT, lines.append)
    assert typed.files == render.render_properties(p) and not typed.typed("t")
    assert len(lines) == 1 and "registry" in lines[0]
    seed = _pipeline(tmp_path / "s", version="0.9.0", deletes="soft")
    lines.clear()
    assert typed_render.render_typed(seed, ROOT, lines.append).files == render.render_properties(seed)
    assert "seed profile" in lines[0]
    # the seed with hard deletes is typed (its own key prefix)
    seed_hard = _pipeline(tmp_path / "h", version="0.9.0")
    props = typed_render.render_typed(seed_hard, ROOT).files[render.props_filename(seed_hard, "t", "MERGE_ON_READ")]
    assert "hoodie.deltastreamer.transformer.sql=SELECT " in props and "date_from_unix_date" in props


def test_a_bad_numeric_scale_is_one_config_line(tmp_path):
    from hudi_cdc.errors import ConfigError

    p = _pipeline(tmp_path)
    p.tables["t"].hudi_options["hoodie.streamer.hudi_cdc.numeric.scale"] = "x"
    with pytest.raises(ConfigError, match=r"^tables.t: hoodie.streamer.hudi_cdc.numeric.scale: 'x' is no number"):
        typed_render.render_typed(p, ROOT)


@pytest.mark.parametrize("hudi", [{"version": "1.2.0", "engine": "hoodiestreamer"}, {"version": "0.9.0"},
                                  {"version": "0.14.0", "engine": "hoodiestreamer"}])
def test_source_check_says_the_toast_limit_for_hoodiestreamer_on_emr(tmp_path, hudi):
    """HoodieStreamer jobs on EMR cannot fill unchanged TOASTed values: `source check` warns with the fix
    (REPLICA IDENTITY FULL), for every profile HoodieStreamer runs on EMR."""
    from hudi_cdc.config import parse_pipeline
    from hudi_cdc.sources.postgres.check import evaluate
    from tests.sources.test_source_check import _by_name, _facts, _pipeline_dict, _tables

    tables = _tables()
    tables[0].toastable, tables[0].rows, tables[0].heap_bytes, tables[0].toast_bytes = ["bio text"], 10, 8192, 0
    data = _pipeline_dict({"name": "moma", "user": "u"})
    data["hudi"] = hudi
    c = _by_name(evaluate(parse_pipeline(data, "x.yaml", str(tmp_path)), _facts(tables=tables)))["artists: TOAST"]
    assert c.status == "warn" and c.fix == "ALTER TABLE public.artists REPLICA IDENTITY FULL;"
    assert "hoodiestreamer writes it into the lake" in c.detail
