"""The MoMA sample lands exactly as the Kafka Connect S3 sink would."""

from pathlib import Path

import fastavro

from hudi_cdc import sample

REAL = Path(__file__).resolve().parents[1] / "data" / "s3sink" / "moma.public.artists+0+0000000000.avro"


def read(p):
    with open(p, "rb") as fh:
        r = fastavro.reader(fh)
        return r.writer_schema, list(r)


def test_snapshot_matches_the_real_sink_files(tmp_path):
    written = sample.land_snapshot(tmp_path, tables=("artists",))
    first = tmp_path / "moma.public.artists" / "partition=0" / "moma.public.artists+0+0000000000.avro"
    assert written[0] == first and len(written) == 51  # 15,089 artists, 300 per file
    ours, theirs = read(first), read(REAL)
    assert ours[0] == theirs[0]  # same writer schema
    assert ours[1][0] == theirs[1][0]  # same first record, Robert Arneson, same LSN and time
    assert sample.land_snapshot(tmp_path, tables=("artists",)) == []  # idempotent


def test_changes_land_one_by_one_with_increasing_mtimes(tmp_path):
    sample.land_snapshot(tmp_path)
    snap_latest = max(p.stat().st_mtime_ns for p in tmp_path.rglob("*.avro"))
    first = sample.land_changes(tmp_path, count=1)
    assert [p.name for p in first] == ["moma.public.artworks+0+0000005001.avro"]
    rest = sample.land_changes(tmp_path)
    assert len(rest) == 9 and sample.land_changes(tmp_path) == []
    mtimes = [p.stat().st_mtime_ns for p in first + rest]
    assert mtimes == sorted(mtimes) and len(set(mtimes)) == 10 and mtimes[0] > snap_latest
    _, recs = read(rest[-1])
    assert recs == [dict(recs[0], artist_id=299, __op="d", __deleted="true")] and recs[0]["nationality"] is None


def test_expected_state_follows_the_seed(tmp_path):
    sample.land_snapshot(tmp_path)
    sample.land_changes(tmp_path, count=8)  # up to artist 299's move to Germany
    artists = sample.expected_state(tmp_path, "artists")
    a = artists[299]
    assert (a["name"], a["nationality"], a["birth_year"], a["death_year"]) == (
        "Gerhard M. Bakker", "German", 1907, 1989)
    sample.land_changes(tmp_path)
    assert 299 not in sample.expected_state(tmp_path, "artists")
    w = sample.expected_state(tmp_path, "artworks")[128447]
    assert (w["date"], w["acquisition_date"]) == (1960, "2009-04-19") and " in (" in w["dimensions"]


def test_the_sample_pipelines_tables_are_the_samples():
    """The sample's pipeline file (hudi-cdc init) names each sample table by its topic, keyed and
    partitioned by fields of its schema; one table's section alone is that table's entry."""
    import yaml

    from hudi_cdc.config import parse_pipeline
    from hudi_cdc.demo.workspace import SAMPLE_TABLES, sample_pipeline_text, sample_tables_text

    doc = yaml.safe_load(sample_pipeline_text())
    p = parse_pipeline(doc, "hudi-cdc.yaml")
    assert list(p.tables) == list(SAMPLE_TABLES) == ["artists", "artworks"]
    for name in SAMPLE_TABLES:
        fields = {f["name"] for f in sample.schema(name)["fields"]}
        t = p.table(name)
        assert t.topic == f"moma.public.{name}" and set(t.record_keys) | {t.partition_field} <= fields
        assert yaml.safe_load(sample_tables_text(name)) == {"tables": {name: doc["tables"][name]}}
