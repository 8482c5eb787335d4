"""Routing (docs/shaping.md#routing) without a database or a JVM: the pipeline file's ``route:`` validated once
at load (one line naming the table and key), the shards as source tables, the rendered route the streamer
reads, the lake key, the streamer's choice of folders and of the transaction cut across shards, and the
refusals. The real chain (three shards on PostgreSQL + Debezium, CoW and MoR): tests/capture/test_shaping.py."""

from __future__ import annotations

import json
import os
import time

import pytest

from hudi_cdc.common import checkpoints
from hudi_cdc.common.properties import load_properties
from hudi_cdc.common.routing import ROUTE_KEY, Route
from hudi_cdc.config import parse_pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.jobs.stream import cuts, routed
from hudi_cdc.sources import routes
from hudi_cdc.sources.tables import shards, source_table, source_tables

DB = {"name": "d", "user": "u"}
LIST = {"tables": ["public.orders_2024_01", "public.orders_2024_02"]}


def pipeline(route=None, hudi=None, **table):
    return parse_pipeline({
        "pipeline": "p", "source": {"root": "/tmp/landing", "database": DB}, "lake": {"root": "/tmp/lake"},
        **({"hudi": hudi} if hudi else {}),
        "tables": {"orders": {"topic": "shop.public.orders", "record_key": "id",
                              "route": LIST if route is None else route, **table},
                   "items": {"topic": "shop.public.items", "record_key": "id"}}}, "x.yaml")


def test_a_listed_route_is_its_shards_with_the_source_column_in_the_key(tmp_path):
    from hudi_cdc.core import render

    p = pipeline()
    assert p.table("orders").record_keys == ["__source_table", "id"] and p.table("orders").source_keys == ["id"]
    assert [(t.name, t.topic, t.qualified) for t in shards(p, "orders")] == [
        ("orders", "shop.public.orders_2024_01", "public.orders_2024_01"),
        ("orders", "shop.public.orders_2024_02", "public.orders_2024_02")]
    assert len(source_tables(p)) == 3
    render.write_properties(p, tmp_path)
    props = load_properties(str(tmp_path / render.props_filename(p, "orders", "COPY_ON_WRITE")))
    assert props["hoodie.datasource.write.recordkey.field"] == "__source_table,id"
    route = Route.from_json(props[ROUTE_KEY])
    assert route == p.route("orders") and route.matches("shop.public.orders_2024_02")
    assert not route.matches("shop.public.orders_2024_03") and route.source_of("shop.public.orders_2024_01") == \
        "public.orders_2024_01"
    assert pipeline({**LIST, "source_in_key": False}).table("orders").record_keys == ["id"]


def test_a_pattern_matches_whole_names_and_is_listed_from_the_database():
    p = pipeline({"pattern": r"(public|tenant_\d+)\.orders(_\d{4}_\d{2})?", "source_column": "shard"})
    r = p.route("orders")
    assert r.matches("shop.tenant_17.orders") and r.matches("shop.public.orders_2024_01")
    assert not r.matches("shop.public.orders_x") and not r.matches("other.tenant_17.orders")
    with pytest.raises(ConfigError, match=r"^tables\.orders\.route\.pattern: its source tables are listed from the"):
        source_tables(p)
    got = routes.resolved(p, lambda: ["public.items", "tenant_17.orders", "tenant_18.orders", "public.orders_2024_01"])
    assert [t.qualified for t in shards(got, "orders")] == ["tenant_17.orders", "tenant_18.orders",
                                                            "public.orders_2024_01"]
    with pytest.raises(ConfigError, match=r"^tables\.orders\.route\.pattern: .* matches no table"):
        routes.resolved(p, lambda: ["public.items"])
    # capture's own signal table (incremental snapshots) is never a shard, whatever the pattern
    wide = pipeline({"pattern": r"public\.(orders|hudi_cdc_.*)", "source_column": "shard"})
    signal = f"public.{wide.slot_name[:56]}_signal"  # hudi_cdc_p_signal: the pattern covers it
    assert [t.qualified for t in shards(routes.resolved(wide, lambda: ["public.orders", signal]), "orders")] == [
        "public.orders"]
    with pytest.raises(ConfigError, match=r"^tables\.orders is routed from several source tables"):
        source_table(p, "orders")


@pytest.mark.parametrize(("route", "table", "hudi", "message"), [
    ({}, {}, None, r"tables\.orders\.route: .*give tables: \[<schema>\.<table>, \.\.\] or pattern"),
    ({**LIST, "pattern": "x"}, {}, None, r"tables\.orders\.route: .*one of them"),
    ({"tables": ["orders_1"]}, {}, None, r"tables\.orders\.route: .*'orders_1' must be <schema>\.<table>"),
    ({"tables": ["public.a", "public.a"]}, {}, None, r"listed twice"),
    ({"pattern": "orders_("}, {}, None, r"tables\.orders\.route: .*pattern: 'orders_\(' is not a regular expression"),
    ({**LIST, "source_column": "id"}, {}, None, r"route\.source_column: id is a record key"),
    ({**LIST, "source_column": "a-b"}, {}, None, r"source_column: 'a-b' must be letters, digits and _"),
    ({**LIST, "source_column": "shard"}, {"derive": {"shard": "1"}}, None, r"derive\.shard: the route's source"),
    ({**LIST}, {"types": {"__source_table": "int"}}, None, r"types\.__source_table: the route's source column"),
    ({"tables": ["public.items"]}, {}, None, r"tables\.orders\.route\.tables: public\.items already feeds table items"),
    ({"pattern": r"public\.item.*"}, {}, None, r"route\.pattern: .* matches public\.items, the source of table items"),
    (LIST, {"history": "scd2"}, None, r"history: a history table of a routed table is not built yet"),
    (LIST, {}, {"version": "0.14.0"}, r"tables\.orders\.route: a routed table .* hudi-cdc's streamer only"),
    (LIST, {}, {"engine": "hoodiestreamer"}, r"tables\.orders\.route: a routed table .* hudi-cdc's streamer only"),
])
def test_a_bad_route_is_one_line_at_load(route, table, hudi, message):
    with pytest.raises(ConfigError, match=message) as err:
        pipeline(route, hudi, **table)
    assert "\n" not in str(err.value)


def test_a_filter_may_read_the_source_column():
    assert pipeline(filter="__source_table <> 'public.orders_2024_01'").shape("orders").filter


def _land(root, topic: str, offset: int, mtime_ms: int) -> str:
    d = root / topic / "partition=0"
    d.mkdir(parents=True, exist_ok=True)
    f = d / f"{topic}+0+{offset:010d}.avro"
    f.write_bytes(b"x")
    os.utime(f, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    return str(f)


def _cut(root, n: int, topics: dict) -> None:
    d = root / cuts.CUTS_DIR
    d.mkdir(exist_ok=True)
    (d / cuts.cut_name(n)).write_text(json.dumps({"cut": n, "lsn": f"0/{n}", "topics": topics}))


def test_a_round_reads_every_shard_folder_oldest_first_and_ends_on_a_cut(tmp_path):
    route = Route(prefix="s", pattern=r"public\.o_[a-z]")
    t0 = int(time.time() * 1000) - 10_000  # recent: files without a cut wait for one (cuts.NO_CUT_AFTER_MS)
    a1 = _land(tmp_path, "s.public.o_a", 0, t0)
    b1 = _land(tmp_path, "s.public.o_b", 0, t0 + 1)
    _land(tmp_path, "s.public.other", 0, t0 + 2)  # not a shard
    a2 = _land(tmp_path, "s.public.o_a", 1, t0 + 1000)
    c1 = _land(tmp_path, "s.public.o_c", 0, t0 + 1001)  # a shard created after cut 1
    root = f"file://{tmp_path}/s.public.o/partition=0"
    _cut(tmp_path, 1, {"s.public.o_a": os.path.basename(a1), "s.public.o_b": os.path.basename(b1),
                       "s.public.other": None})
    files, cp, meta = routed.pick(root, route, None, 1 << 30, False, "orders", log=lambda m: None)
    assert [f[0] for f in files] == [a1, b1] and cp == str(t0 + 1) and meta[checkpoints.CUT_KEY] == "1"
    # the source limit stops the round inside cut 2's files: it waits rather than end off a cut
    files, cp, _ = routed.pick(root, route, cp, 1, False, "orders", log=lambda m: None)
    assert files == [] and cp == str(t0 + 1)
    _cut(tmp_path, 2, {"s.public.o_a": os.path.basename(a2), "s.public.o_b": os.path.basename(b1),
                       "s.public.o_c": os.path.basename(c1)})
    files, cp, meta = routed.pick(root, route, cp, 1 << 30, False, "orders", log=lambda m: None)
    assert [f[0] for f in files] == [a2, c1] and cp == str(t0 + 1001) and meta[checkpoints.CUT_KEY] == "2"
    files, cp, _ = routed.pick(root, route, cp, 1, False, "orders", log=lambda m: None)
    assert files == [] and cp == str(t0 + 1001)


def test_init_proposes_a_route_for_tables_that_differ_only_by_a_suffix():
    import yaml

    from hudi_cdc.sources.db_tables import DbTable
    from hudi_cdc.sources.init_routes import proposals

    cols = [("id", "integer"), ("item", "text")]
    found = [DbTable("public", f"orders_2024_0{m}", cols, ["id"], "d") for m in (1, 2, 3)] + \
        [DbTable(f"tenant_{n}", "orders", cols, ["id"], "d") for n in (17, 18)] + \
        [DbTable("public", "items", cols, ["id"], "d"), DbTable("public", "log_1", cols, ["id"], "d")]
    text, notes = proposals(found, "shop", {"orders", "items"}, "  ")
    assert len(notes) == 2 and "3 tables (public.orders_2024_01, public.orders_2024_02, public.orders_2024_03)" in \
        notes[0]
    uncommented = "\n".join(line.replace("# ", "", 1) for line in text.splitlines() if "proposal" not in line
                            and "uncomment" not in line)
    entries = yaml.safe_load("tables:\n" + uncommented)["tables"]
    assert set(entries) == {"orders_all", "orders_all_all"}
    p = parse_pipeline({"pipeline": "p", "source": {"root": "/tmp/l", "database": DB}, "lake": {"root": "/tmp/k"},
                        "tables": entries}, "x.yaml")
    names = ["public.orders_2024_01", "public.orders_2024_11", "tenant_17.orders", "tenant_2.orders", "public.items"]
    got = routes.resolved(p, lambda: names)
    assert [t.qualified for t in shards(got, "orders_all")] == ["public.orders_2024_01", "public.orders_2024_11"]
    assert [t.qualified for t in shards(got, "orders_all_all")] == ["tenant_17.orders", "tenant_2.orders"]
