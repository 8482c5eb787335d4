"""render-sql: every rendered Trino, Spark, Redshift and Athena statement parses in its dialect with
sqlglot (the Redshift procedure's body statement by statement too), the apply logic carries the
pipeline's semantics, and the `--seed` flavour reproduces the seeds' own statements (golden tests
against the seed texts in $HUDI_CDC_SHARED/seeds)."""

from __future__ import annotations

import re

import pytest
import sqlglot
from sqlglot import exp

from hudi_cdc import sample
from hudi_cdc.cli import main
from hudi_cdc.config import parse_pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.sinks import ENGINES, render_sql
from tests.shared import seed_text

# statements sqlglot keeps as an opaque Command (valid Redshift it does not model)
OPAQUE = {("redshift", "create_external_schema"), ("redshift", "call_procedure")}
# the seed's own Redshift DDL (column-level `distkey`) is beyond sqlglot's Redshift grammar
SEED_UNPARSED = {("redshift", "create_stage"), ("redshift", "create_target")}


def pipeline(tmp_path, **table):
    spec = {"topic": "moma.public.artists", "record_key": "artist_id", "partition_field": "nationality", **table}
    return parse_pipeline({"pipeline": "t", "source": {"root": str(tmp_path / "landing")},
                           "lake": {"root": str(tmp_path / "lake"), "hive_database": "moma"},
                           "tables": {"artists": spec}}, "t.yaml", str(tmp_path))


def parse(sql: str, dialect: str) -> list:
    return sqlglot.parse(sql, read=dialect, error_level=sqlglot.ErrorLevel.RAISE)


def procedure_body(sql: str) -> list[str]:
    body = sql.split("$$")[1]
    body = body[body.index("BEGIN") + len("BEGIN"):body.rindex("END")]
    body = "\n".join(line for line in body.splitlines() if not line.strip().startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip()]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ordering", ["__lsn", ["__lsn", "__source_ts_ms"]])
def test_every_statement_parses_in_its_dialect(tmp_path, engine, ordering):
    sts = render_sql(pipeline(tmp_path, ordering_field=ordering), engine, schema=sample.schema("artists"))
    assert sts and all(s.dialect == engine for s in sts)
    for s in sts:
        trees = parse(s.sql, s.dialect)
        assert len(trees) == 1, s.name
        if (engine, s.name) not in OPAQUE:
            assert not isinstance(trees[0], exp.Command), f"{engine} {s.name} parsed only as a Command"
            assert trees[0].find(exp.Command) is None, f"{engine} {s.name} has an opaque part"
        if s.name == "create_procedure":
            for inner in procedure_body(s.sql):
                tree = parse(inner, "redshift")[0]
                assert isinstance(tree, (exp.Delete, exp.Insert)), inner


# what each seed statement must parse into (sqlglot falls back to an opaque exp.Command without raising
# on SQL it does not model, so parsing alone proves nothing)
SEED_TREES = {"create_consume": exp.Create, "merge": exp.Merge, "create_streaming_view": exp.Create,
              "create_last_extract": exp.Create, "insert_dummy_extract": exp.Insert,
              "create_procedure": exp.Create, "call_procedure": exp.Command, "latest_state": exp.Select}


@pytest.mark.parametrize("engine", ENGINES)
def test_seed_statements_parse(tmp_path, engine):
    sts = render_sql(pipeline(tmp_path), engine, seed=True, schema=sample.schema("artists"))
    assert sts
    for s in sts:
        if (engine, s.name) in SEED_UNPARSED:
            continue
        assert s.name in SEED_TREES, f"{engine} {s.name}: say what it must parse into"
        trees = parse(s.sql, s.dialect)
        assert len(trees) == 1, s.name
        assert type(trees[0]) is SEED_TREES[s.name], f"{engine} {s.name}: {type(trees[0]).__name__}"
        if SEED_TREES[s.name] is not exp.Command:
            assert trees[0].find(exp.Command) is None, f"{engine} {s.name} has an opaque part"
    if engine == "trino":
        merge = next(parse(s.sql, "trino")[0] for s in sts if s.name == "merge")
        assert merge.args.get("whens") is not None and merge.find(exp.When) is not None


def test_apply_semantics_in_the_trino_merge(tmp_path):
    sts = {s.name: s.sql for s in render_sql(pipeline(tmp_path), "trino", schema=sample.schema("artists"))}
    merge = sts["merge_target"]
    # latest per key: the ordering field, then the tie-break field, then the landed file (Kafka offset)
    assert 'ORDER BY "__lsn" DESC, "__source_ts_ms" DESC, __file DESC' in merge
    # stale events (no newer than the stored row or the key's tombstone) change nothing
    assert 'WHEN MATCHED AND l."__lsn" > t."__lsn" AND (COALESCE(l."__deleted", \'false\') = \'true\'' in merge
    assert 'NOT l.__has_tomb OR l."__lsn" > l."__tomb___lsn"' in merge
    # the high-water mark: the files staged, never a value read back from the consume table
    assert 'WHERE NOT EXISTS (SELECT 1 FROM iceberg."moma"."artists__applied_files" f WHERE f.file_path = c."$path")' \
        in sts["stage"]
    assert "FROM iceberg.\"moma\".\"artists__stage\"" in sts["log_applied_files"]
    lex = render_sql(pipeline(tmp_path, ordering_field=["__lsn", "__source_ts_ms"]), "trino",
                     schema=sample.schema("artists"))
    m = next(s.sql for s in lex if s.name == "merge_target")
    assert ('(l."__lsn" > t."__lsn" OR (l."__lsn" = t."__lsn" AND l."__source_ts_ms" > t."__source_ts_ms"))'
            in m)


def test_soft_deletes_keep_rows_everywhere(tmp_path):
    for engine in ("trino", "spark"):
        merge = next(s.sql for s in render_sql(pipeline(tmp_path, deletes="soft"), engine,
                                               schema=sample.schema("artists")) if s.name == "merge_target")
        assert "THEN DELETE" not in merge
    view = render_sql(pipeline(tmp_path, deletes="soft"), "athena", schema=sample.schema("artists"))[-1].sql
    assert view.rstrip().endswith("WHERE x.__rn = 1")


def test_unknown_engine_and_table(tmp_path):
    with pytest.raises(ConfigError, match="unknown engine 'mysql'"):
        render_sql(pipeline(tmp_path), "mysql", schema=sample.schema("artists"))
    with pytest.raises(ConfigError, match="unknown table 'nope'"):
        render_sql(pipeline(tmp_path), "trino", "nope", schema=sample.schema("artists"))


def test_cli_render_sql_reads_the_landed_schema(tmp_path, capsys):
    from hudi_cdc.demo.workspace import land_sample

    p = pipeline(tmp_path)
    land_sample(tmp_path / "landing", "snapshot", None, lambda m: None)
    cfg = tmp_path / "t.yaml"
    cfg.write_text(f"pipeline: t\nsource: {{root: {tmp_path / 'landing'}}}\n"
                   f"lake: {{root: {tmp_path / 'lake'}, hive_database: moma}}\n"
                   "tables:\n  artists: {topic: moma.public.artists, record_key: artist_id}\n")
    assert main(["-c", str(cfg), "render-sql", "--engine", "redshift", "--table", "artists"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("-- artists: ddl create_schema\nCREATE SCHEMA IF NOT EXISTS \"moma\";\n")
    assert "CALL \"moma\".\"incremental_sync_artists\"();" in out
    assert p.table("artists").topic in out


# ---- golden: the seed flavour against the seed texts ------------------------------------------

def norm(text: str) -> str:
    text = re.sub(r"//.*?//", " ", text)  # the seed's own editorial // ... // notes
    return re.sub(r"\s+", " ", text).strip().lower().rstrip(";").strip()


def seed_pipeline(tmp_path, table, key, ordering, db="db"):
    return parse_pipeline({"pipeline": "s", "source": {"root": str(tmp_path)}, "lake": {"root": str(tmp_path),
                           "hive_database": db},
                           "tables": {table: {"topic": "salesdb.salesdb.CUSTOMER", "record_key": key,
                                              "ordering_field": ordering}}}, "s.yaml", str(tmp_path))


def avro(fields: list[tuple[str, str]]) -> dict:
    return {"type": "record", "name": "Value", "fields": [{"name": n, "type": ["null", t]} for n, t in fields]}


def test_seed_000_trino_merge_is_the_seed_text(tmp_path):
    seed = seed_text("000")
    want = seed[seed.index("MERGE INTO <consume_table>"):seed.index("**The above")]
    schema = avro([("custkey", "string"), ("first_name", "string"), ("city", "string"), ("state", "string"),
                   ("fico", "int"), ("registration_date", {"type": "int", "logicalType": "date"})])
    p = seed_pipeline(tmp_path, "customers", "custkey", "ts_ms")
    sts = render_sql(p, "trino", seed=True, schema=schema)
    got = next(s.sql for s in sts if s.name == "merge")
    got = got.replace("db.customers_changes", "<staging_table>").replace("db.customers", "<consume_table>")
    assert norm(got) == norm(want)
    # the consume table: the seed's columns (its VARCHAR lengths are not in an Avro schema)
    ddl = norm(next(s.sql for s in sts if s.name == "create_consume"))
    assert ddl.startswith("create table db.customers ( custkey varchar, first_name varchar, city varchar, "
                          "state varchar, fico integer, registration_date date, ts_ms bigint ) with (type='iceberg', "
                          "format='parquet', location=")
    # the same MERGE text in Spark SQL
    spark = next(s.sql for s in render_sql(p, "spark", seed=True, schema=schema) if s.name == "merge")
    assert spark == next(s.sql for s in sts if s.name == "merge")


def test_seed_004_redshift_statements_are_the_seed_text(tmp_path):
    seed = seed_text("004")
    schema = avro([("CUST_ID", "string"), ("NAME", "string"), ("MKTSEGMENT", "string")])
    p = seed_pipeline(tmp_path, "customer", "CUST_ID", "__lsn", db="myschema")
    got = {s.name: s.sql for s in render_sql(p, "redshift", seed=True, schema=schema)}

    def seed_cols(text: str) -> str:  # the seed names its target columns; the flavour keeps the source's
        for a, b in (("cust_id", "customer_id"), ("name", "customer_name"), ("mktsegment", "market_segment")):
            text = re.sub(rf"\b{a}\b", b, text)
        return text.replace('"myschema_kafka"', '"myschema"')

    def between(start: str, end: str) -> str:
        i = seed.index(start)
        return seed[i:seed.index(end, i) + len(end)]

    cases = {
        "create_streaming_view": between("CREATE MATERIALIZED VIEW customer_debezium", '"salesdb.salesdb.CUSTOMER"'),
        "create_stage": between("CREATE TABLE public.customer_stg", "(customer_id)"),
        "create_target": between("CREATE TABLE public.customer_target", "(customer_id)"),
        "create_last_extract": between("CREATE TABLE public.debezium_last_extract", "DISTSTYLE AUTO"),
        "insert_dummy_extract": between("Insert into public.debezium_last_extract", "00:00:00')"),
        "create_procedure": between("CREATE OR REPLACE PROCEDURE public.incremental_sync_customer()", "END\n\n$$"),
        "call_procedure": "call incremental_sync_customer()",
    }
    for name, want in cases.items():
        assert norm(seed_cols(got[name])) == norm(want), name


def test_seed_001_athena_latest_state_is_the_seed_query(tmp_path):
    seed = seed_text("001")
    i = seed.index("SELECT address_id, address, address2, city, state_province,\npostal_code, country, last_update\n"
                   "FROM (SELECT *, ROW_NUMBER()")
    want = norm(seed[i:seed.index(";", i)])
    schema = avro([(c, "string") for c in ("address_id", "address", "address2", "city", "state_province",
                                           "postal_code", "country", "last_update")])
    p = seed_pipeline(tmp_path, "pagila_query", "address_id", "last_update", db="pagila_kafka_connect")
    got = render_sql(p, "athena", seed=True, schema=schema)[0].sql.replace("pagila_query_changes", "pagila_query")
    # the seed's query, up to the example filter it adds for the post (address_id BETWEEN ...)
    assert want.startswith(norm(got)) and want[len(norm(got)):].strip().startswith("and address_id between")


# ---- a shaped table (docs/shaping.md): the same rows as the Hudi table -----------------------------

def shaped_pipeline(tmp_path, mask: str = "redact", db: str = "moma", **extra):
    """The artists table shaped as tests/sinks/sink_stream.py's SHAPE says."""
    from tests.sinks.sink_stream import SHAPE

    spec = {"topic": "moma.public.artists", "record_key": "artist_id", "ordering_field": "__lsn",
            "partition_field": "label", **SHAPE, "mask": {"name": mask}, **extra}
    return parse_pipeline({"pipeline": "t", "source": {"root": str(tmp_path / "landing"), "mask_salt_env": "T_SALT"},
                           "lake": {"root": str(tmp_path / "lake"), "hive_database": db},
                           "tables": {"artists": spec}}, "t.yaml", str(tmp_path))


def statements(p, engine) -> dict[str, str]:
    return {s.name: s.sql for s in render_sql(p, engine, schema=sample.schema("artists"))}


@pytest.mark.parametrize("engine", ENGINES)
def test_shaped_statements_parse_and_shape(tmp_path, engine, monkeypatch):
    monkeypatch.setenv("T_SALT", "pepper-77")
    sts = render_sql(shaped_pipeline(tmp_path, "hash" if engine == "spark" else "redact"), engine,
                     schema=sample.schema("artists"))
    for s in sts:
        trees = parse(s.sql, s.dialect)
        assert len(trees) == 1 and ((engine, s.name) in OPAQUE or trees[0].find(exp.Command) is None), s.name
        for inner in procedure_body(s.sql) if s.name == "create_procedure" else []:
            assert isinstance(parse(inner, "redshift")[0], (exp.Delete, exp.Insert)), inner
        assert "pepper-77" not in s.sql, f"{engine} {s.name}: the salt is in the text"
    sql = {s.name: s.sql for s in sts}
    # where the events enter: one projection, the filter folded into the delete field (or the view's WHERE)
    entry = {"trino": "stage", "spark": "stage", "redshift": "create_procedure", "athena": "create_latest_view"}
    text = sql[entry[engine]]
    q = "`" if engine == "spark" else '"'
    assert f"{q}gender{q}" not in text.split("FROM (")[0]  # the projection, before the landed rows
    assert "'French'" in text and ("UPPER(" in text) and "DECIMAL(10, 2)" in text
    if engine == "athena":
        assert "AND COALESCE((\"x\".\"nationality\" <> 'French'), FALSE)" in text
        assert sql["create_changes"].count("`gender`") == 1  # the landed files keep every column
    else:
        alias = "x" if engine == "redshift" else "c"
        assert f"THEN {q}{alias}{q}.{q}__deleted{q} ELSE 'true' END AS {q}__deleted{q}" in text
        target = sql["create_target"]
        assert f"{q}gender{q}" not in target and f"{q}label{q}" in target
        assert "DECIMAL(10,2)" in target
    if engine == "spark":
        assert "SHA2(CONCAT((CASE WHEN '${env:T_SALT}' = CONCAT('$', '{env:T_SALT}')" in text
        assert "PARTITIONED BY (`label`)" in sql["create_target"]
    else:
        assert "'****' AS \"name\"" in text


@pytest.mark.parametrize("engine", ["trino", "redshift", "athena"])
def test_shaping_an_engine_cannot_match_is_refused(tmp_path, engine):
    with pytest.raises(ConfigError, match=r"^tables\.artists\.mask\.name: \w+ SQL would need the hash salt"):
        render_sql(shaped_pipeline(tmp_path, "hash"), engine, schema=sample.schema("artists"))
    p = shaped_pipeline(tmp_path, types={"label": "string", "birth_year": "bigint"})
    statements(p, engine)  # int -> bigint is the same everywhere
    schema = sample.schema("artists")
    schema = {**schema, "fields": [{**f, "type": ["null", "double"]} if f["name"] == "birth_year" else f
                                   for f in schema["fields"]]}
    with pytest.raises(ConfigError, match=r"^tables\.artists\.types\.birth_year: .* casts a double to bigint"):
        render_sql(p, engine, schema=schema)
    text = shaped_pipeline(tmp_path, types={"label": "string", "nationality": "int"})
    with pytest.raises(ConfigError, match=r"^tables\.artists\.types\.nationality: .* casts a string to int"):
        statements(text, engine)
    odd = shaped_pipeline(tmp_path, derive={"label": "soundex_x(nationality)"})
    with pytest.raises(ConfigError, match=r"^tables\.artists\.derive\.label: soundex_x\(\) is not a function"):
        statements(odd, engine)


def test_shaping_every_engine_refuses(tmp_path):
    untyped = shaped_pipeline(tmp_path, types={"birth_year": "decimal(10,2)"})
    for engine in ENGINES:
        with pytest.raises(ConfigError, match=r"^tables\.artists\.derive\.label: render-sql needs its lake type"):
            statements(untyped, engine)
        with pytest.raises(ConfigError, match=r"^tables\.artists: --seed renders the seed recipes' own"):
            render_sql(shaped_pipeline(tmp_path), engine, seed=True, schema=sample.schema("artists"))
        with pytest.raises(ConfigError, match=r"^tables\.artists\.types\.__deleted: the apply logic reads"):
            statements(shaped_pipeline(tmp_path, types={"label": "string", "__deleted": "boolean"}), engine)
    typed = sample.schema("artists")
    typed = {**typed, "fields": [{**f, "type": ["null", {"type": "int", "connect.name": "io.debezium.time.Date"}]}
                                 if f["name"] == "birth_year" else f for f in typed["fields"]]}
    with pytest.raises(ConfigError, match=r"^tables\.artists\.types\.birth_year: birth_year lands as io\.debezium"):
        render_sql(shaped_pipeline(tmp_path), "spark", schema=typed)


def test_iceberg_apply_checks_the_salt_before_spark(tmp_path, monkeypatch):
    from hudi_cdc.sinks import iceberg

    p = shaped_pipeline(tmp_path, "hash")
    monkeypatch.delenv("T_SALT", raising=False)
    with pytest.raises(ConfigError, match=r"^source\.mask_salt_env: environment variable T_SALT is not set"):
        iceberg.apply(p, "artists")
    monkeypatch.setenv("T_SALT", "it's")
    with pytest.raises(ConfigError, match=r"^source\.mask_salt_env: the salt in T_SALT holds a quote or backslash"):
        iceberg.apply(p, "artists")


def test_the_iceberg_job_scrubs_the_salt_from_its_errors(monkeypatch):
    from hudi_cdc.jobs.iceberg_apply import scrub

    monkeypatch.setenv("T_SALT", "pepper-77")
    got = scrub("== SQL ==\n... ELSE 'pepper-77' END ...", {"salt_env": "T_SALT"})
    assert got == "== SQL ==\n... ELSE '<salt>' END ..."
    assert scrub("pepper-77", {"salt_env": None}) == "pepper-77"
