"""Capture's reaction to a table's landed schema changing (capture/defaults.py, capture/fieldtypes.py): which
DDL makes it re-take a table by an incremental snapshot. No database, no JVM."""

from __future__ import annotations

import fastavro

from tests.capture.test_capture_snapshot import _pipeline


def test_new_and_rewritten_columns_request_a_snapshot(tmp_path, monkeypatch):
    """No database: a table's landed schema gaining a column the source says has a default (ADD COLUMN
    ... DEFAULT), or a column whose type changed (ALTER COLUMN TYPE ... USING), requests an incremental
    snapshot of it; a column without a default, a schema that changes only a default (SET DEFAULT), a
    table's first file and capture's own __ fields request nothing; the comparison after a restart is with
    the newest landed file's header; a request that cannot be made is one line naming the table and columns."""
    from types import SimpleNamespace

    from hudi_cdc.capture import defaults
    from hudi_cdc.config import parse_pipeline
    from hudi_cdc.errors import SourceError

    p = parse_pipeline(_pipeline({"name": "m", "user": "u", "slot": "s1"}), str(tmp_path / "x.yaml"), str(tmp_path))
    topic = "incsnap.public.a"
    folder = tmp_path / "landing" / topic / "partition=0"
    folder.mkdir(parents=True)
    old = {"type": "record", "name": "v", "fields": [{"name": n, "type": ["null", "int"]} for n in ("id", "grp")]}
    with open(folder / f"{topic}+0+0000000000.avro", "wb") as fh:
        fastavro.writer(fh, old, [])

    def schema(*names, types=None):
        types = types or {}
        return {"type": "record", "name": "v", "fields": [{"name": n, "type": types.get(n, ["null", "int"])}
                                                          for n in names]}

    asked, requested, said = [], [], []
    source = SimpleNamespace(kind="postgresql", signals=object(), not_null_rewrites=False,
                             added_defaults=lambda _p, t, cols: asked.append((t.name, cols)) or [c for c in cols
                                                                                                 if c != "plain"])
    monkeypatch.setattr(defaults.snapshot_requests, "request_snapshot",
                        lambda _p, table, progress: requested.append(table))
    landing = SimpleNamespace(topic_dirs={topic: str(folder)}, partition=0)
    nc = defaults.NewColumns(p, source, landing, said.append)
    nc.file_started(topic, schema("id", "grp", "__oldkey_id"))  # nothing new but capture's own field
    nc.file_started(topic, schema("id", "grp", "plain", "flag", "__lsn"))
    with_default = {"grp": [{"type": "int", "connect.default": 3}, "null"]}  # SET DEFAULT: the union turns round
    nc.file_started(topic, schema("id", "grp", "plain", "flag", "__lsn", types=with_default))
    nc.file_started("incsnap.public.other", schema("id", "x"))  # a first file: nothing existed before
    nc.poll()
    assert asked == [("a", ["plain", "flag"])] and requested == ["a"]
    assert "a: new column(s) flag have a default (or are generated) in public.a" in said[0]

    nc.file_started(topic, schema("id", "grp", "plain", "flag", types={"grp": ["null", "string"]}))  # TYPE USING
    nc.poll()
    assert requested == ["a", "a"] and asked == [("a", ["plain", "flag"])]
    assert "a: column grp: its type changed (int -> string) in public.a" in said[-1]

    def refused(_p, table, progress):  # the request cannot be made (e.g. the signal table is not writable)
        raise SourceError("cannot create or write the signal table")

    monkeypatch.setattr(defaults.snapshot_requests, "request_snapshot", refused)
    nc.file_started(topic, schema("id", "grp", "plain", "flag", "score", "__lsn", types={"grp": ["null", "string"]}))
    nc.poll()  # said in one line, capture goes on
    assert requested == ["a", "a"] and said[-1].startswith("WARNING a: new column(s) score: could not give the rows")
    assert "hudi-cdc capture snapshot --table a" in said[-1]
    assert said[-1].endswith("cannot create or write the signal table")


def test_which_type_changes_rewrite_existing_values():
    """Pure: the landed type changes after which the database may hold other values for existing rows."""
    from hudi_cdc.capture.fieldtypes import rewritten

    def dec(precision, scale):
        return {"type": "bytes", "scale": scale, "precision": precision, "connect.version": 1,
                "connect.parameters": {"scale": str(scale), "connect.decimal.precision": str(precision)},
                "connect.name": "org.apache.kafka.connect.data.Decimal", "logicalType": "decimal"}

    def enum(labels, default=None):
        t = {"type": "string", "connect.version": 1, "connect.parameters": {"allowed": labels},
             "connect.name": "io.debezium.data.Enum"}
        return [t | {"connect.default": default}, "null"] if default else ["null", t]

    assert rewritten(["null", "string"], ["null", "int"], not_null_rewrites=False) == \
        "its type changed (string -> int)"
    assert rewritten(["null", dec(10, 2)], ["null", dec(10, 1)], not_null_rewrites=False).startswith("its type")
    # widenings keep every value: int -> bigint, smallint -> int, real -> double, numeric(10,2) -> numeric(14,2)
    int16 = {"type": "int", "connect.type": "int16"}
    for old, new in (("int", "long"), (int16, "int"), ("float", "double"), (dec(10, 2), dec(14, 2))):
        assert rewritten(["null", old], ["null", new], not_null_rewrites=True) is None, (old, new)
    assert rewritten(["null", "long"], ["null", "int"], not_null_rewrites=True).startswith("its type")
    assert rewritten(["null", "int"], [{"type": "int", "connect.default": 7}, "null"], not_null_rewrites=True) is None
    assert rewritten(["null", "int"], "int", not_null_rewrites=False) is None  # PostgreSQL: SET NOT NULL
    assert rewritten(["null", "int"], "int", not_null_rewrites=True) == "it became NOT NULL"  # MariaDB MODIFY
    assert rewritten("int", ["null", "int"], not_null_rewrites=True) is None  # DROP NOT NULL
    assert rewritten(enum("low,high"), enum("low,mid,high", default="low"), not_null_rewrites=True) is None
    assert rewritten(enum("low,mid,high"), enum("low,high"), not_null_rewrites=True) == "enum label(s) mid removed"
