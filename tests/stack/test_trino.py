"""Trino for real (Trino 483, one server for the session, tests/plugins/trino.py), on the stack's Hive
metastore:

- the lake's Hudi tables (Hudi 1.2.0, synced to the metastore by the streamer's own Hive sync) read
  through Trino's Hudi connector after a bootstrap and a stream round: CoW and MoR `_ro` against
  hudi-rs, value by value;
- the rendered Trino statements (`render-sql --engine trino`) applied batch by batch to a stream with
  same-millisecond updates, partition moves, key-only deletes, redelivery and events older than a
  delete: after each batch the Iceberg table read back through Trino (and with pyiceberg) equals the
  state replayed from the events (sample.replay); the Athena latest-state view over the same landed
  files too;
- seed 000/002's own Trino statements (`render-sql --seed`) on the same stream, and where they go wrong.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path

import fastavro
import pytest

from hudi_cdc import sample
from hudi_cdc.lake.reader import read_table
from hudi_cdc.stack.trino_client import TrinoClient, TrinoError
from tests.jobs.test_cdc_semantics import DATA_COLS, Lake
from tests.sinks.sink_stream import ALL_COLS, ROUNDS, check_round

pytestmark = [pytest.mark.trino, pytest.mark.hive]

KEY = "artist_id"
# schema names of this session: the metastore may outlive it (HUDI_CDC_TEST_STACK_DIR)
RUN = uuid.uuid4().hex[:6]
TOPIC = "moma.public.artists"


def _multiset(rows, cols) -> Counter:
    return Counter(tuple(r.get(c) for c in cols) for r in rows)


class SyncedLake(Lake):
    """tests.jobs.test_cdc_semantics.Lake whose pipeline syncs each commit to the stack's metastore."""

    def __init__(self, tmp, spark, metastore_uri: str, db: str, hudi_options=None,
                 types=("COPY_ON_WRITE", "MERGE_ON_READ"), table_version: int | None = None):
        super().__init__(tmp, spark, hudi_options=hudi_options, types=types, table_version=table_version)
        from hudi_cdc.core import render

        lake = self.pipeline.lake.model_copy(update={"hive_database": db, "hive_metastore": metastore_uri})
        self.pipeline = self.pipeline.model_copy(update={"lake": lake})
        render.write_properties(self.pipeline, self.props_dir)


def _select() -> str:
    return ", ".join(f'"{c}"' for c in DATA_COLS)


def _trino_equals_hudi_rs(trino, table: str, base_path: str, read_optimized: bool) -> Counter:
    want = read_table(base_path, read_optimized=read_optimized)
    got = trino.query(f"SELECT {_select()} FROM {table}")
    assert len(got) == len(want), f"{table}: {len(got)} rows through Trino, {len(want)} with hudi-rs"
    assert _multiset(got, DATA_COLS) == _multiset(want, DATA_COLS), f"{table}: Trino and hudi-rs differ"
    return _multiset(got, DATA_COLS)


def _bootstrap_and_stream(lake, trino) -> None:
    """Bootstrap and one stream round; after each, Trino's Hudi connector equals hudi-rs on the CoW
    table and the MoR read-optimized table; its `_rt` is read-optimized too (base files only)."""
    db = lake.pipeline.lake.hive_database
    cow = lake.pipeline.base_path("artists", "COPY_ON_WRITE")
    mor = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    for i, (events, op) in enumerate(((ROUNDS[0], "BULK_INSERT"), (ROUNDS[1], "UPSERT"))):
        lake.land(events)
        lake.run(op)
        lake.assert_matches()
        rows = _trino_equals_hudi_rs(trino, f"hudi.{db}_cow.artists", cow, False)
        assert sum(rows.values()) == len(lake.expected())
        ro = _trino_equals_hudi_rs(trino, f"hudi.{db}_mor.artists_ro", mor, True)
        if i == 1:
            # `_rt` through Trino is the read-optimized view too: the connector does not merge the log
            # files, so the round's changes (a deleted key, the moved key's new place) are not there,
            # unlike in hudi-rs' (and Hive's) snapshot read
            rt = _multiset(trino.query(f"SELECT {_select()} FROM hudi.{db}_mor.artists_rt"), DATA_COLS)
            assert rt == ro and rt != _multiset(read_table(mor), DATA_COLS)
            assert sum(rt.values()) > len(lake.expected())
            # the stream round is in the CoW table as read through Trino: moved, deleted, kept
            by_key = {r[0]: r for r in rows}
            nat = DATA_COLS.index("nationality")
            assert by_key[1][nat] == "German" and 3 not in by_key and by_key[5][DATA_COLS.index("name")] == "five-b"


def test_hudi_connector_reads_table_version_6(tmp_path, spark, trino, hive_stack):
    """What the pipeline writes by default (hudi.table_version 6: Hudi 1.2.0 writing table version 6,
    timeline layout 1): Trino 483 (and 476) reads the CoW table and the MoR `_ro` table, the same rows as hudi-rs."""
    lake = SyncedLake(tmp_path, spark, hive_stack.metastore_uri, f"trino_hudi6_{RUN}")
    _bootstrap_and_stream(lake, trino)
    props = (tmp_path / "lake" / "artists_cow" / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.version=6" in props


def test_hudi_connector_reads_table_version_9(tmp_path, spark, trino, hive_stack):
    """Hudi 1.2.0's own table version (hudi.table_version 9, LSM timeline), which Trino 476 could not read
    (its Hudi library was 1.0.2: "Could not load archived commit timeline", then no Parquet reader for the
    LSM files), Trino 483 reads (its Hudi connector is on Hudi 1.2.0): CoW and MoR `_ro` equal hudi-rs after
    a bootstrap, a stream round and once archival has written the LSM timeline's files."""
    from tests.jobs.test_cdc_semantics import ev

    db = f"trino_hudi9_{RUN}"
    archive_soon = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                    "hoodie.clean.commits.retained": "1", "hoodie.cleaner.commits.retained": "1"}
    lake = SyncedLake(tmp_path, spark, hive_stack.metastore_uri, db, hudi_options=archive_soon, table_version=9)
    _bootstrap_and_stream(lake, trino)
    hoodie = tmp_path / "lake" / "artists_cow" / ".hoodie"
    history = hoodie / "timeline" / "history"
    assert "hoodie.table.version=9" in (hoodie / "hoodie.properties").read_text()
    for n in range(6):  # upserts until the archival has written the first LSM file
        lake.land([ev(1, 1000 + n, name=f"update {n}")])
        lake.run("UPSERT")
        if list(history.glob("*.parquet")):
            break
    assert list(history.glob("*.parquet")), "no archival after 8 commits"
    lake.assert_matches()
    _trino_equals_hudi_rs(trino, f"hudi.{db}_cow.artists", lake.pipeline.base_path("artists", "COPY_ON_WRITE"), False)
    _trino_equals_hudi_rs(trino, f"hudi.{db}_mor.artists_ro", lake.pipeline.base_path("artists", "MERGE_ON_READ"),
                          True)


# ---- the rendered Trino statements and the Athena view, batch by batch ---------------------------

def sink_pipeline(tmp_path, db: str, **table):
    from hudi_cdc.config import parse_pipeline

    spec = {"topic": TOPIC, "record_key": KEY, "partition_field": "nationality", **table}
    return parse_pipeline({"pipeline": "t", "source": {"root": str(tmp_path / "landing")},
                           "lake": {"root": str(tmp_path / "lake"), "hive_database": db},
                           "tables": {"artists": spec}}, "t.yaml", str(tmp_path))


class Landing:
    """The sink's files of one topic, one per batch, offsets as the S3 sink names them."""

    def __init__(self, pipeline):
        self.dir = Path(pipeline.topic_dir("artists")[len("file://"):])
        self.dir.mkdir(parents=True)
        self.offset = 0
        self.events: list[dict] = []

    def land(self, records) -> Path:
        path = self.dir / sample.file_name(TOPIC, self.offset)
        with open(path, "wb") as fh:
            fastavro.writer(fh, sample.schema("artists"), records)
        self.offset += len(records)
        self.events.extend(records)
        return path

    def replayed(self) -> dict:
        return {k: {c: v[c] for c in ALL_COLS} for k, v in sample.replay(self.events, KEY).items()}


def by_key(rows: list[dict]) -> dict:
    out = {r[KEY]: {c: r[c] for c in ALL_COLS} for r in rows}
    assert len(out) == len(rows), "a key is in the table twice"
    return out


def pyiceberg_rows(trino, schema: str, table: str) -> dict:
    """The Iceberg table's newest snapshot read without Trino: its newest metadata file, by pyiceberg."""
    from pyiceberg.table import StaticTable

    meta = trino.query(f'SELECT file FROM iceberg."{schema}"."{table}$metadata_log_entries" '
                       "ORDER BY timestamp DESC LIMIT 1")[0]["file"]
    return by_key(StaticTable.from_metadata(meta).scan().to_arrow().to_pylist())


def test_rendered_trino_statements_and_athena_view(tmp_path, trino):
    """`render-sql --engine trino` run as rendered, batch by batch (the ddl once, the apply statements
    per landed file): the Iceberg table read back through Trino and with pyiceberg equals the replayed
    state after every batch; the Athena latest-state view (its Trino SQL; its Hive DDL is Athena's own)
    over the same landed files too."""
    from hudi_cdc.sinks import render_sql

    db = f"trino_sink_{RUN}"
    p = sink_pipeline(tmp_path, db)
    landing = Landing(p)
    landing.land(ROUNDS[0])  # render-sql reads the schema from the newest landed file
    sts = render_sql(p, "trino")
    athena = {s.name: s for s in render_sql(p, "athena")}
    hive_session = TrinoClient(trino.url, catalog="hive")
    rows: dict = {}
    for i, events in enumerate(ROUNDS):
        if i:
            landing.land(events)
        counts = {}
        for s in sts:
            if s.kind == "ddl" and i:
                continue
            counts[s.name] = trino.execute(s.sql)[2]
        if i == 0:
            hive_session.execute(athena["create_latest_view"].sql)
        assert counts["stage"] == len(events), "only the new file is staged: the applied-files log"
        assert counts["log_applied_files"] == 1
        previous, rows = rows, by_key(trino.query(f'SELECT * FROM iceberg."{db}"."artists"'))
        assert rows == landing.replayed(), f"batch {i}: the Iceberg table differs from the replayed state"
        check_round(i, rows, previous)
        assert pyiceberg_rows(trino, db, "artists") == rows
        view = by_key(hive_session.query(f'SELECT * FROM "{db}"."artists_latest"'))
        assert view == rows, f"batch {i}: the Athena latest-state view differs from the replayed state"


def test_shaped_trino_statements_and_athena_view(tmp_path, trino):
    """A shaped table (tests/sinks/sink_stream.py's SHAPE, name redacted): the rendered Trino statements
    and the Athena view over two batches (rows moving into and out of the filter, a DELETE of a row never
    held) equal the shaped replayed state, value by value (Trino's REST gives decimals as text)."""
    from decimal import Decimal

    from hudi_cdc.sinks import render_sql
    from tests.sinks.sink_stream import SHAPE, SHAPED_COLS, SHAPED_ROUNDS, check_shaped_round, shaped_expected

    db = f"trino_shaped_{RUN}"
    p = sink_pipeline(tmp_path, db, **{**SHAPE, "mask": {"name": "redact"}, "partition_field": "label",
                                       "ordering_field": "__lsn"})
    landing = Landing(p)
    landing.land(SHAPED_ROUNDS[0])
    sts = render_sql(p, "trino")
    athena = {s.name: s for s in render_sql(p, "athena")}
    hive_session = TrinoClient(trino.url, catalog="hive")

    def shaped(rows: list[dict]) -> dict:
        out = {r[KEY]: {c: Decimal(r[c]) if c == "birth_year" and r[c] is not None else r[c] for c in SHAPED_COLS}
               for r in rows}
        assert len(out) == len(rows) and all("gender" not in r for r in rows)
        return out

    for i, events in enumerate(SHAPED_ROUNDS[:2]):
        if i:
            landing.land(events)
        for s in sts:
            if s.kind == "apply" or not i:
                trino.execute(s.sql)
        if i == 0:
            hive_session.execute(athena["create_latest_view"].sql)
        rows = shaped(trino.query(f'SELECT * FROM iceberg."{db}"."artists"'))
        assert rows == shaped_expected(landing.events, lambda v: "****"), f"batch {i}: not the shaped replay"
        check_shaped_round(i, rows)
        view = shaped(hive_session.query(f'SELECT * FROM "{db}"."artists_latest"'))
        assert view == rows, f"batch {i}: the Athena view differs from the shaped Iceberg table"


# ---- seed 000/002's own statements -----------------------------------------------------------------

SEED_COLS = [KEY, "name", "nationality", "gender", "birth_year", "death_year"]


def _lit(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return str(v)


def _envelope(e: dict, row_type: str) -> str:
    """A flattened event as the raw Debezium envelope the seed's "changes" table holds: before (the key
    of a delete), after (the row), source.lsn, op, ts_ms (here the source commit time)."""
    def row(values):
        return f"CAST(ROW({', '.join(_lit(v) for v in values)}) AS {row_type})"

    deleted = e["__deleted"] == "true" or e["__op"] == "d"
    before = row([e[KEY]] + [None] * (len(SEED_COLS) - 1)) if deleted else "NULL"
    after = "NULL" if deleted else row([e[c] for c in SEED_COLS])
    op = "d" if deleted else e["__op"]
    return (f"({before}, {after}, CAST(ROW({e['__lsn']}, {e['__source_ts_ms']}) AS ROW(lsn BIGINT, ts_ms BIGINT)), "
            f"'{op}', {e['__source_ts_ms']})")


def test_seed_000_statements_on_trino(tmp_path, trino):
    """Seed 000/002's consume table and MERGE (`render-sql --engine trino --seed`) on real Trino, the raw
    Debezium envelopes of the same stream appended to its "changes" table batch by batch and the whole
    table merged each time, as the seed does:

    - its DDL does not run on Trino: `type='iceberg'` is Starburst Galaxy's table property (Trino's
      Iceberg connector has no `type`); without it the table is created;
    - its MERGE runs, and equals the replayed state on every key except those whose latest changes share
      one ts_ms (same-millisecond updates): it orders by ts_ms alone, so which of them wins is up to
      Trino's sort, not the log order (LSN) that decides in the database."""
    from hudi_cdc.sinks import render_sql

    db = f"trino_seed_{RUN}"
    p = sink_pipeline(tmp_path, db)
    sts = {s.name: s.sql for s in render_sql(p, "trino", seed=True, schema=sample.schema("artists"))}
    session = TrinoClient(trino.url, catalog="iceberg")
    session.execute(f"CREATE SCHEMA IF NOT EXISTS hive.{db} WITH (location = '{p.lake_root}/trino/{db}.db')")
    with pytest.raises(TrinoError, match="table property 'type' does not exist"):
        session.execute(sts["create_consume"])
    session.execute(sts["create_consume"].replace("type='iceberg',", ""))
    row_type = "ROW(" + ", ".join(f"{c} {'INTEGER' if c in (KEY, 'birth_year', 'death_year') else 'VARCHAR'}"
                                  for c in SEED_COLS) + ")"
    session.execute(f"CREATE TABLE {db}.artists_changes (before {row_type}, after {row_type}, "
                    "source ROW(lsn BIGINT, ts_ms BIGINT), op VARCHAR, ts_ms BIGINT)")
    events: list[dict] = []
    undecided: set = set()
    for i, batch in enumerate(ROUNDS):
        events.extend(batch)
        session.execute(f"INSERT INTO {db}.artists_changes VALUES " +
                        ", ".join(_envelope(e, row_type) for e in batch))
        session.execute(sts["merge"])
        got = {r[KEY]: r for r in session.query(f"SELECT * FROM {db}.artists")}
        want = {k: {**{c: v[c] for c in SEED_COLS}, "ts_ms": v["__source_ts_ms"]}
                for k, v in sample.replay(events, KEY).items()}
        # keys whose newest ts_ms is shared by changes with different contents: the seed cannot decide them
        for k in want.keys() | got.keys():
            mine = [e for e in events if e[KEY] == k]
            top = max(e["__source_ts_ms"] for e in mine)
            if len({tuple(e[c] for c in SEED_COLS + ["__op"]) for e in mine if e["__source_ts_ms"] == top}) > 1:
                undecided.add(k)
        wrong = {k for k in want.keys() | got.keys() if got.get(k) != want.get(k)}
        assert wrong <= undecided, f"batch {i}: the seed's MERGE is wrong beyond same-ms ties: {wrong - undecided}"
        assert set(got) == set(want), f"batch {i}: the seed's MERGE kept or lost a key"
    # the stream's same-millisecond pairs (key 2 in batch 0, key 5 in batch 1) are exactly what it cannot order
    assert undecided == {2, 5}
    ties = session.query(f"SELECT after.name AS name, source.lsn AS lsn FROM {db}.artists_changes "
                         "WHERE after.artist_id = 2 AND ts_ms = 5000 ORDER BY source.lsn")
    assert ties == [{"name": "two-early", "lsn": 150}, {"name": "two-late", "lsn": 151}]


def test_local_status_lists_trino(trino, stack_config, capsys):
    from hudi_cdc.cli import main

    assert trino.query("SHOW CATALOGS") == [{"Catalog": c} for c in ("hive", "hudi", "iceberg", "system")]
    assert main(["local", "status", "--data-dir", str(stack_config.data_dir), "-o", "json"]) == 0
    rows = {r["service"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["trino"]["state"] == "running" and rows["trino"]["url"] == trino.url


@pytest.mark.s3
def test_native_s3_cannot_list_on_s3proxy(trino, s3_bucket):
    """The catalogs' native S3 file system on the stack's S3 endpoint: Trino (476 and 483) lists objects with the
    `x-amz-optional-object-attributes: RestoreStatus` header (it always asks for Glacier restore status)
    and s3proxy 4.1.0 answers 501 NotImplemented, so no table or schema location there can be used."""
    db = f"trino_s3_{RUN}"
    refused = ("Invalid location URI: s3://.*S3Exception: A header you provided implies functionality that is "
               "not implemented.*Status Code: 501")
    with pytest.raises(TrinoError, match=refused):
        trino.execute(f"CREATE SCHEMA hive.{db} WITH (location = 's3://{s3_bucket}/lake/trino/{db}.db')")
