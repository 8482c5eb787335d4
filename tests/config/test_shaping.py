"""A table's shaping (docs/shaping.md) without a database or a JVM: validated once at load (one line naming
the table and key), Debezium's properties for capture and `connectors render`, the rendered table
properties, and the pure functions every engine shares (common/shaping.py, sources/shape_sql.py). The
real chain is tests/capture/test_shaping.py; the streamer's own masks tests/jobs/test_shape.py."""

from __future__ import annotations

import hashlib

import pytest

from hudi_cdc.common.shaping import REDACTED, Shape, mask_hash, redact
from hudi_cdc.config import parse_pipeline
from hudi_cdc.errors import ConfigError

DB = {"name": "d", "user": "u"}


def pipeline(source=None, **table):
    return parse_pipeline({
        "pipeline": "p", "source": {"root": "/tmp/landing", "mask_salt_env": "T_SALT", "database": DB,
                                    **(source or {})},
        "lake": {"root": "/tmp/lake"},
        "tables": {"orders": {"topic": "a.public.orders", "record_key": "id", **table},
                   "items": {"topic": "a.public.items", "record_key": "id"}}}, "x.yaml")


FULL = {"columns": {"exclude": ["ssn"]}, "mask": {"email": "hash", "phone": "redact"},
        "filter": "tenant = 'acme' AND NOT is_test", "derive": {"day": "date_format(created_at, 'yyyy-MM-dd')"},
        "partition_field": "day", "types": {"amount": "Decimal(20, 4)", "created_at": "DATE"}}


def test_valid_shaping_resolves_to_one_shape():
    s = pipeline(**FULL).shape("orders")
    assert s.exclude == ("ssn",) and s.hashed == ["email"] and s.redacted == ["phone"] and s.salt_env == "T_SALT"
    assert s.types == {"amount": "decimal(20,4)", "created_at": "date"}  # normalised
    assert Shape.from_json(s.to_json()) == s and pipeline().shape("orders").empty
    assert [c for c in ("id", "ssn", "email", "day", "__op", "_hoodie_is_deleted") if s.keeps(c, ["id"])] == \
        ["id", "email", "day", "__op", "_hoodie_is_deleted"]
    inc = pipeline(columns={"include": ["name"]}).shape("orders")
    assert [c for c in ("id", "name", "ssn", "__lsn") if inc.keeps(c, ["id"])] == ["id", "name", "__lsn"]


@pytest.mark.parametrize(("table", "source", "message"), [
    ({"filter": "amount >"}, None, r"tables\.orders: filter: 'amount >' does not parse as Spark SQL: "),
    ({"derive": {"d": "upper(x"}}, None, r"tables\.orders: derive\.d: 'upper\(x' does not parse"),
    ({"filter": "a = 1; DROP TABLE t"}, None, r"tables\.orders: filter: .* must be one SQL expression"),
    ({"filter": "id IN (SELECT id FROM t)"}, None, r"filter: .* not a statement or subquery"),
    ({"columns": {"exclude": ["ssn"]}, "filter": "ssn IS NULL"}, None,
     r"tables\.orders: filter: ssn is excluded \(columns\.exclude\) \(x\.yaml\)"),
    ({"columns": {"include": ["name"]}, "derive": {"d": "upper(city)"}}, None,
     r"derive\.d: city is not a kept column \(columns\.include\)"),
    ({"mask": {"email": "hash"}, "filter": "email LIKE '%@x'"}, None, r"filter: email is masked"),
    ({"columns": {"exclude": ["id"]}}, None, r"columns\.exclude: id is a record key"),
    ({"columns": {"include": ["a"], "exclude": ["b"]}}, None, r"tables\.orders\.columns: give include or exclude"),
    ({"mask": {"email": "scramble"}}, None, r"tables\.orders\.mask\.email: Input should be 'hash' or 'redact'"),
    ({"types": {"amount": "varchar(10)"}}, None, r"tables\.orders\.types: amount: 'varchar\(10\)' is not a lake type"),
    ({"types": {"amount": "decimal(40,2)"}}, None, r"precision 1\.\.38"),
    ({"derive": {"ssn": "1"}, "columns": {"exclude": ["ssn"]}}, None, r"derive\.ssn: a derived column takes a new"),
    ({"columns": {"exclude": ["ssn"]}, "partition_field": "ssn"}, None, r"partition_field: ssn is excluded"),
    ({"filter": "a = 1", "deletes": "soft"}, None, r"filter: .* needs deletes: hard"),
    ({"mask": {"email": "hash"}}, {"mask_salt_env": None}, r"tables\.orders\.mask: hash needs source\.mask_salt_env"),
    ({}, {"mask_salt_env": "not a name"}, r"source\.mask_salt_env: String should match pattern"),
])
def test_a_bad_shaping_is_one_line_naming_table_and_key(table, source, message):
    with pytest.raises(ConfigError, match=message) as err:
        pipeline(source=source, **table)
    assert "\n" not in str(err.value)


def test_capture_sets_debeziums_exclusion_and_masks_with_the_salt_and_render_never(monkeypatch):
    from hudi_cdc.connect.connectors import render_connectors
    from hudi_cdc.sources.postgres.engine import engine_properties

    monkeypatch.setenv("T_SALT", "s4lt")
    p = pipeline(**FULL)
    props = engine_properties(p, None)
    assert props["column.exclude.list"] == r"public\.orders\.ssn"
    assert props["column.mask.hash.v2.SHA-256.with.salt.s4lt"] == r"public\.orders\.email"
    assert props["column.mask.with.4.chars"] == r"public\.orders\.phone"
    with pytest.raises(ConfigError, match=r"^tables\.orders\.mask: Kafka Connect cannot take Debezium's hash salt"):
        render_connectors(p)
    rendered = render_connectors(pipeline(**{**FULL, "mask_in": "streamer"}))[0]["config"]
    assert not [k for k in rendered if "salt" in k] and rendered["column.exclude.list"] == r"public\.orders\.ssn"
    mixed = engine_properties(pipeline(columns={"include": ["name"]}), None)
    assert mixed["column.include.list"] == r"public\.orders\.id,public\.orders\.name,public\.items\..+"
    from hudi_cdc import sources

    tables = {n: t.model_dump(exclude_unset=True) for n, t in p.tables.items()}
    maria = parse_pipeline({**p.model_dump(), "tables": tables,
                            "source": {**p.source.model_dump(), "database": {**DB, "kind": "mariadb"}}}, "x.yaml")
    binlog = sources.get("mariadb").engine_properties(maria, None)
    assert binlog["column.exclude.list"] == r"public\.orders\.ssn" and binlog[
        "column.mask.hash.v2.SHA-256.with.salt.s4lt"] == r"public\.orders\.email"
    monkeypatch.delenv("T_SALT")
    with pytest.raises(ConfigError, match=r"^source\.mask_salt_env: environment variable T_SALT is not set"):
        engine_properties(p, None)
    # hashed by the streamer: capture lands the values and needs no salt
    assert not [k for k in engine_properties(pipeline(**{**FULL, "mask_in": "streamer"}), None) if "salt" in k]


def test_rendered_properties_carry_the_shape_not_the_salt_and_hoodiestreamer_refuses(monkeypatch):
    from hudi_cdc.core.render import render_properties

    monkeypatch.setenv("T_SALT", "s4lt")
    files = render_properties(pipeline(**FULL))
    line = next(v for v in files["orders_cow.properties"].splitlines() if v.startswith("hoodie.streamer.hudi_cdc"))
    assert Shape.from_json(line.split("=", 1)[1]) == pipeline(**FULL).shape("orders")
    assert not any("s4lt" in text for text in files.values())
    assert "hudi_cdc.shape" not in files["items_cow.properties"]
    seed = pipeline(**FULL).model_copy(update={"hudi": pipeline().hudi.model_copy(update={"version": "0.9.0"})})
    with pytest.raises(ConfigError, match=r"^tables\.orders: columns/mask/filter/derive/types are applied by "
                                          r"hudi-cdc's streamer and the local 0\.14 engine, not by Hudi 0\.9\.0's"):
        render_properties(seed)


def test_the_014_engine_gets_the_shaping_in_its_transformer_sql_or_one_line():
    """HoodieDeltaStreamer 0.14.0: the typed SQL wrapped in the shaping's SELECT, the target schema to match
    (the rows it gives are compared with hudi-cdc's streamer in tests/capture/test_shaping.py)."""
    from hudi_cdc.runners.deltastreamer.shaped_sql import shaped

    target = {"type": "record", "name": "v", "fields": [
        {"name": n, "type": ["null", "string"], "default": None} for n in ("id", "ssn", "email", "phone", "amount")]
        + [{"name": "_hoodie_is_deleted", "type": "boolean", "default": False}]}
    typed = ("SELECT a FROM <SRC>", target)
    s = Shape(exclude=("ssn",), mask={"phone": "redact"}, mask_in="streamer", filter="amount > 1",
              derive={"day": "substr(email, 1, 3)"}, types={"amount": "decimal(20,4)", "day": "string"})
    sql, out = shaped(*typed, s, "orders", ["id"])
    assert sql == ("SELECT `id`, `email`, '****' AS `phone`, "
                       "CAST(`amount` AS decimal(20,4)) AS `amount`, CAST((substr(email, 1, 3)) AS string) AS `day`, "
                       "(_hoodie_is_deleted OR NOT COALESCE((amount > 1), false)) AS _hoodie_is_deleted "
                       "FROM (SELECT a FROM <SRC>) hudi_cdc_typed")
    assert [f["name"] for f in out["fields"]] == ["id", "email", "phone", "amount", "day", "_hoodie_is_deleted"]
    assert out["fields"][3]["type"][1]["logicalType"] == "decimal"
    assert shaped(*typed, Shape(), "orders", ["id"]) == typed
    with pytest.raises(ConfigError, match=r"^tables\.orders\.derive\.d: HoodieStreamer needs its lake type"):
        shaped(*typed, Shape(derive={"d": "1"}), "orders", ["id"])
    with pytest.raises(ConfigError, match=r"^tables\.orders\.mask: HoodieStreamer would need the hash salt"):
        shaped(*typed, Shape(mask={"email": "hash"}, mask_in="streamer", salt_env="S"), "orders", ["id"])


def test_mask_functions_are_debeziums():
    """v2: SHA-256 over the salt's bytes then the value's text, lower-case hex (proved against Debezium's own
    output in tests/capture/test_shaping.py); NULL stays NULL; redact is column.mask.with.4.chars, NULL too."""
    assert mask_hash("hello", "salt") == hashlib.sha256(b"salthello").hexdigest()
    assert mask_hash("Zoë", "s") == hashlib.sha256("sZoë".encode()).hexdigest() and mask_hash(None, "s") is None
    assert mask_hash(42, "s") == mask_hash("42", "s") and len(mask_hash("x", "")) == 64
    assert redact("x") == REDACTED == "****" and redact(None) == REDACTED  # Debezium's fixed mask replaces NULL


def test_verify_transpiles_the_shaping_to_the_database():
    from hudi_cdc.sources.shape_sql import db_type, masked_value, transpile

    assert transpile("date_format(created_at, 'yyyy-MM-dd')", "postgres", "w") == \
        "TO_CHAR(CAST(created_at AS TIMESTAMP), 'YYYY-MM-DD')"
    assert transpile("tenant = 'acme' AND NOT is_test", "postgres", "w") == "tenant = 'acme' AND NOT is_test"
    assert db_type("decimal(20,4)", "postgres") == "numeric(20,4)" and db_type("string", "postgres") == "text"
    s = pipeline(**FULL).shape("orders")
    assert masked_value(s, "email", "a@b", "k") == mask_hash("a@b", "k")
    assert masked_value(s, "phone", "1", None) == "****"
    assert masked_value(s, "name", "Ann", None) == "Ann"


def test_source_check_warns_where_a_mask_or_filter_reads_a_toastable_column():
    from hudi_cdc.sources.postgres.check import TableFacts, _shape_checks
    from hudi_cdc.sources.tables import SourceTable

    p = pipeline(**FULL)
    facts = TableFacts(SourceTable("orders", "a.public.orders", "public", "orders"), True,
                       toastable=["email text", "tenant text", "notes text"])
    (check,) = _shape_checks(p, facts, "DEFAULT", "ALTER TABLE public.orders REPLICA IDENTITY FULL;")
    assert check.status == "warn"
    assert "TOAST-able column(s) email, tenant under REPLICA IDENTITY DEFAULT" in check.detail
    assert _shape_checks(p, TableFacts(facts.table, True, toastable=["notes text"]), "DEFAULT", "")[0].status == "ok"
    assert _shape_checks(p, TableFacts(facts.table, True, replica_identity="f", toastable=["email text"]), "FULL",
                         "") == []


def test_mysql_verify_selects_the_shaped_and_routed_rows():
    """MySQL/MariaDB verify (sources/mysql/shaped.py, routed.py): one SELECT of the kept columns, masked
    columns as their text, lake types as MySQL's CASTs, derived columns and the filter transpiled to MySQL,
    over the table or the shards' UNION ALL tagged with their names (the real run: tests/capture/
    test_shaping_mariadb.py)."""
    from hudi_cdc.sources.comparison import Column
    from hudi_cdc.sources.mysql.routed import union_sql
    from hudi_cdc.sources.mysql.shaped import UNRESOLVED, shaped_select
    from hudi_cdc.sources.mysql.verify import value
    from hudi_cdc.sources.shape_sql import cast_sql, db_type
    from hudi_cdc.sources.tables import SourceTable

    cols = [Column.of(n, t, k) for n, t, k in [("id", "int", "plain"), ("ssn", "varchar(20)", "plain"),
                                                ("email", "text", "plain"), ("amount", "decimal(10,3)", "decimal"),
                                                ("created_at", "datetime", "timestamp"), ("flag", "int", "plain"),
                                                ("Order Date", "date", "date")]]
    shape = Shape(exclude=("ssn",), mask={"email": "hash"}, filter="tenant = 'acme' AND NOT is_test",
                  derive={"day": "date_format(created_at, 'yyyy-MM-dd')", "n": "amount * 2"},
                  types={"amount": "decimal(20,4)", "day": "string", "flag": "boolean"})
    sel = shaped_select(shape, cols, ["id"], "tables.orders")
    names = [c.name for c in sel.columns]
    assert names == ["id", "email", "amount", "created_at", "flag", "Order_Date", "day", "n"]
    assert sel.sql(names, "`d`.`orders`") == (
        "SELECT `id`, CAST(`email` AS CHAR) AS `email`, CAST(`amount` AS DECIMAL(20,4)) AS `amount`, `created_at`, "
        "((`flag`) <> 0) AS `flag`, `Order Date`, "
        "CAST((DATE_FORMAT(CAST(created_at AS DATETIME), '%Y-%m-%d')) AS CHAR) AS `day`, (amount * 2) AS `n` "
        "FROM `d`.`orders` WHERE COALESCE((tenant = 'acme' AND NOT is_test), FALSE)")
    kinds = {c.name: c.kind for c in sel.columns}
    assert (kinds["email"], kinds["amount"], kinds["flag"], kinds["day"], kinds["n"]) == \
        ("plain", "decimal", "bit1", "plain", UNRESOLVED)
    # an untyped derived column takes the kind of its result's type (pymysql's NEWDECIMAL: 246)
    desc = [(n, 246 if n == "n" else 253) for n in names]
    assert {c.name: c.kind for c in sel.resolve(sel.columns, names, desc)}["n"] == "decimal"
    assert value("bit1", 1) is True and value("bit1", 0) is False
    assert [db_type(t, "mysql") for t in ("decimal(20,4)", "string", "double", "float", "bigint", "date",
                                          "timestamp")] == ["DECIMAL(20,4)", "CHAR", "DOUBLE", "FLOAT", "SIGNED",
                                                            "DATE", "DATETIME(6)"]
    assert cast_sql("x", "boolean", "postgres") == "CAST(x AS boolean)"
    plain = shaped_select(Shape(), cols, ["id"], "tables.orders")
    assert plain.sql(["id", "Order_Date"], "t") == "SELECT `id`, `Order Date` FROM t"
    shards = [SourceTable("orders", f"s.shop.orders_{x}", "shop", f"orders_{x}") for x in "ab"]
    assert union_sql(shards, cols[:2], "__source_table") == (
        "(SELECT 'shop.orders_a' AS `__source_table`, `id`, `ssn` FROM `shop`.`orders_a` UNION ALL "
        "SELECT 'shop.orders_b' AS `__source_table`, `id`, `ssn` FROM `shop`.`orders_b`) AS hudi_cdc_routed")
