"""Issue 36, item 4: the edge-value and DDL catalogue on a real PostgreSQL 15 through real Debezium, the
CLI's capture -> bootstrap -> capture -> stream -> verify (docs/types.md, "Edge values and DDL, measured").

One table holds a column per edge type, rows at the ends of each type's range in the snapshot and the
same rows again streamed; the DDL steps run mid-stream on tables of their own."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import pytest
import yaml

from hudi_cdc.cli import main
from tests.jobs.test_types_real import _sql

pytestmark = [pytest.mark.spark]

EDGE_DDL = [
    "CREATE EXTENSION IF NOT EXISTS citext", "CREATE EXTENSION IF NOT EXISTS hstore",
    "CREATE DOMAIN email_t AS text CHECK (VALUE LIKE '%@%')",
    "CREATE TYPE lvl AS ENUM ('low', 'high')",
    "CREATE DOMAIN int_list AS int[] CHECK (cardinality(VALUE) < 100)",
    "CREATE TYPE pair AS (a int, b text)",
    # its key holds a date, a numeric(p,s) and a timestamptz (their defaults): capture reads the numeric NaN by
    # them (specials.py) and the streamer locates the rows by Hudi's text of them (keytext.py)
    "CREATE TABLE edges (id int, n numeric, n2 numeric(10,2), d date, ts timestamp, tstz timestamptz, "
    "tmtz timetz, iv interval, m money, r4 int4range, rtz tstzrange, dl int_list, cp pair, e lvl, vb varbit, "
    "x xml, ci citext, s text, iarr int[], tarr timestamptz[], narr numeric[], earr text[], "
    "bx box, cc circle, ln line, ls lseg, pa path, pg polygon, tq tsquery, ia interval[], ma money[], "
    "nma name[], xa xml[], vba varbit[], pta point[], ba bit[], tva tsvector[], ena lvl[], cpa pair[], tqa tsquery[], "
    "bxa box[], hs hstore, i2 int[], ema email_t[], nneg numeric(5,-2), ntiny numeric(3,5), fna float8[], "
    "kd date DEFAULT '2024-02-29', kn numeric(10,2) DEFAULT 12.50, ktz timestamptz DEFAULT '2024-01-01 "
    "10:00:00.123456+02', PRIMARY KEY (id, kd, kn, ktz))",
]
EDGE_COLUMNS = ("id, n, n2, d, ts, tstz, tmtz, iv, m, r4, rtz, dl, cp, e, vb, x, ci, s, iarr, tarr, narr, earr, "
                "bx, cc, ln, ls, pa, pg, tq, ia, ma")
GEOMETRIC = ("'((0,0),(1.5,1))', '<(1,2),3>', '{{1,2,3}}', '[(0,0),(1,1)]', '[(0,0),(1,1)]', '((0,0),(1,1),(1,0))', "
             "'a & !b', ARRAY['1 day', NULL]::interval[], ARRAY[1.5, NULL]::money[]")
NO_GEOMETRIC = ", NULL" * 9
# arrays Debezium leaves out (name[], xml[], varbit[], point[]), sends as an always-NULL boolean (bit[]) or as NULL
# when an element is NULL (tsvector[], enum, composite, tsquery and geometric arrays): read
# by key by capture as PostgreSQL's element texts (pg_arrays.py); set on a snapshot row (4) and in a stream (1)
TEXT_ARRAYS = ("UPDATE edges SET nma = '{{ab,NULL}}', xa = ARRAY['<a/>'::xml, NULL], vba = '{{0010,NULL}}', "
               "pta = ARRAY[point(1,2), NULL], ba = '{{1,0,NULL}}', tva = ARRAY['a b'::tsvector, NULL], "
               "ena = ARRAY['low'::lvl, NULL], cpa = ARRAY[ROW(1, 'a')::pair, NULL], "
               "tqa = ARRAY['a & b'::tsquery, NULL], bxa = ARRAY['((0,0),(1,1))'::box, NULL], "
               # an hstore (Debezium's JSON of it), a 2-D array (Debezium: NULL elements), an array of a domain over
               # text with a NULL element (Debezium: the array NULL)
               "hs = 'a=>1, \"b c\"=>NULL', i2 = '{{{{1,2}},{{3,NULL}}}}', ema = ARRAY[NULL, 'x@y']::email_t[], "
               # PostgreSQL 15's negative scale and scale above the precision (decimals.py)
               "nneg = -9999900, ntiny = 0.00123, fna = ARRAY['NaN'::float8, NULL] "
               "WHERE id = {id}")
ROWS = [  # id 1..4 in the snapshot, 11..14 streamed: the same values (Debezium's two paths differ)
    "({id}, 'NaN', 99999999.99, '4713-01-01 BC', '4713-01-01 00:00:00 BC', '4713-01-01 00:00:00+00 BC', "
    "'00:00:00+15:59', '1 year 2 mons 3 days', '-92233720368547758.08', '[1,10)', "
    "'[2024-01-01 00:00+00,infinity)', '{{1,NULL,3}}', ROW(1, 'a'), 'low', B'0010', '<a/>', 'MiXeD', '', '{{}}', "
    "ARRAY[NULL]::timestamptz[], ARRAY[NULL, 1.5]::numeric[], '{{}}', " + GEOMETRIC + ")",
    "({id}, 'Infinity', -99999999.99, '5874897-12-31', '294276-12-31 23:59:59.999999', "
    "'294276-12-31 23:59:59.999999+00', '23:59:59.999999-15:59', '-178000000 years', '92233720368547758.07', "
    "'empty', '(,)', '{{}}', ROW(NULL, NULL), 'high', B'', '<r><a x=\"1\">t</a></r>', 'ß', repeat('x', 300000), "
    "ARRAY[NULL, 2147483647, -2147483648], ARRAY['2024-01-01 00:00:00+00', NULL]::timestamptz[], "
    "ARRAY[1e-30, NULL]::numeric[], ARRAY['']::text[]" + NO_GEOMETRIC + ")",
    "({id}, '-Infinity', 0, 'infinity', 'infinity', '-infinity', '12:00:00+00', '1 mon -1 days', 0, "
    "'[-2147483648,2147483647)', '[2024-01-01 00:00+05,2024-01-02 00:00+05]', NULL, NULL, NULL, B'1', NULL, "
    "repeat('é', 5000), '😀 4-byte', NULL, NULL, ARRAY['NaN', 2, NULL, '-Infinity']::numeric[], NULL"
    + NO_GEOMETRIC + ")",
    "({id}, 1e100, NULL, '0001-01-01', '0001-01-01 00:00:00', '1970-01-01 00:00:00+00', NULL, "
    "'178000000 years'" + ", NULL" * 14 + NO_GEOMETRIC + ")",
    "({id}, 1e-100, NULL, '1999-12-31', '-infinity', '2000-01-01 00:00:00.000001+00', NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL" + NO_GEOMETRIC + ")",
]
DDL_TABLES = [
    # ALTER COLUMN TYPE ... USING, SET/DROP DEFAULT, SET/DROP NOT NULL
    "CREATE TABLE ddl (id int PRIMARY KEY, code text, b text DEFAULT 'x', c int NOT NULL, a int)",
    "INSERT INTO ddl (id, code, c, a) SELECT g, g::text, g, g FROM generate_series(1, 5) g",
    # RENAME TABLE; DROP and re-CREATE under the same name. ren's key holds a timetz, which has no database
    # text (it equals only in its own zone): its NaN and its interval[] are not looked up, one WARNING each
    "CREATE TABLE ren (id int, t timetz DEFAULT '10:00:00+02', v text, n numeric, ia interval[], PRIMARY KEY (id, t))",
    "INSERT INTO ren (id, v, n, ia) VALUES (1, 'a', 'NaN', '{1 day}'), (2, 'b', NULL, NULL)",
    "CREATE TABLE dr (id int PRIMARY KEY, v text)", "INSERT INTO dr VALUES (1, 'old'), (2, 'old')",
    # a keyless table (REPLICA IDENTITY FULL, its record key named by hand), given a primary key mid-stream
    "CREATE TABLE nokey (id int NOT NULL, v text)", "ALTER TABLE nokey REPLICA IDENTITY FULL",
    "INSERT INTO nokey VALUES (1, 'a'), (2, 'b')",
    # declarative partitioning (the publication publishes via the root): a partition attached and detached
    "CREATE TABLE parted (id int, k int NOT NULL, v text, PRIMARY KEY (id, k)) PARTITION BY RANGE (k)",
    "CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (100)",
    "INSERT INTO parted SELECT g, g, 'p1' FROM generate_series(1, 5) g",
    # names Debezium changes: the topic (a space: shop.public.Order_Items), the columns (Line_No, _1st); its
    # composite key has an empty part in a table without partitions (keytext.py: no row writer)
    'CREATE TABLE "Order Items" ("OrderId" int, "Line No" text, "1st" numeric(10,2), "select" text, '
    'PRIMARY KEY ("OrderId", "Line No"))',
    """INSERT INTO "Order Items" VALUES (1, '', 1.50, 'a'), (1, 'b', 2.25, NULL), (2, '', NULL, 'c')""",
]
ROUND_1 = [  # values streamed, an enum label added mid-stream, column DDL
    "ALTER TABLE edges ALTER COLUMN kd SET DEFAULT '1999-12-31', ALTER COLUMN kn SET DEFAULT -0.01, "
    "ALTER COLUMN ktz SET DEFAULT '2000-01-01 00:00:00+00'",  # the streamed rows' key values
    *[f"INSERT INTO edges ({EDGE_COLUMNS}) VALUES " + r.format(id=10 + i) for i, r in enumerate(ROWS, 1)],
    "ALTER TYPE lvl ADD VALUE 'mid' BEFORE 'high'",
    "UPDATE edges SET e = 'mid' WHERE id IN (1, 11)",
    "UPDATE edges SET s = s || 'y' WHERE id = 2", TEXT_ARRAYS.format(id=1),
    # interval[] and money[], which Debezium leaves out of the events: read by key by capture (pg_arrays.py)
    "UPDATE edges SET ia = ARRAY['1 mon -1 days', '-04:05:06.78', NULL]::interval[], "
    "ma = ARRAY['-92233720368547758.08', '92233720368547758.07', NULL]::money[] WHERE id = 2",
    "UPDATE edges SET ia = '{}', ma = '{}' WHERE id = 12",
    "ALTER TABLE ddl ALTER COLUMN code TYPE int USING code::int * 100",  # every stored value changes, no events
    "UPDATE ddl SET code = code * 10 WHERE id = 1",
    "ALTER TABLE ddl ALTER COLUMN b SET DEFAULT 'y'", "INSERT INTO ddl (id, code, c) VALUES (6, 6, 6)",
    "ALTER TABLE ddl ALTER COLUMN b DROP DEFAULT", "INSERT INTO ddl (id, code, c) VALUES (7, 7, 7)",
    "ALTER TABLE ddl ALTER COLUMN c DROP NOT NULL", "INSERT INTO ddl (id, code) VALUES (8, 8)",
    "UPDATE ddl SET a = 0 WHERE a IS NULL", "ALTER TABLE ddl ALTER COLUMN a SET NOT NULL",
    "UPDATE ddl SET a = 99 WHERE id = 2",
    # an interval[] column added mid-stream: Debezium leaves it out, capture reads it (pg_arrays.py)
    "ALTER TABLE ddl ADD COLUMN spans interval[]", "UPDATE ddl SET spans = '{2 days,NULL}' WHERE id = 3",
    """UPDATE "Order Items" SET "1st" = 9.99, "select" = 'b' WHERE "OrderId" = 1 AND "Line No" = ''""",
    'DELETE FROM "Order Items" WHERE "OrderId" = 2', """INSERT INTO "Order Items" VALUES (3, '', 0.01, 'from')""",
]
ROUND_2 = [  # a primary key added to a keyless table; a partition attached (with rows) and one detached
    "ALTER TABLE nokey ADD PRIMARY KEY (id)", "UPDATE nokey SET v = 'z' WHERE id = 1",
    "CREATE TABLE parted_2 (id int NOT NULL, k int NOT NULL, v text, PRIMARY KEY (id, k))",
    "INSERT INTO parted_2 SELECT g, 100 + g, 'p2' FROM generate_series(1, 3) g",
    "ALTER TABLE parted ATTACH PARTITION parted_2 FOR VALUES FROM (100) TO (200)",
    "UPDATE parted SET v = 'p2 updated' WHERE id = 1 AND k = 101",
    "ALTER TABLE parted DETACH PARTITION parted_1",
    "INSERT INTO parted VALUES (9, 109, 'after')",
]
ROUND_3 = [  # RENAME TABLE; DROP and re-CREATE under the same name
    "ALTER TABLE ren RENAME TO ren_new", "INSERT INTO ren_new (id, v) VALUES (3, 'c')",
    "DROP TABLE dr", "CREATE TABLE dr (id int PRIMARY KEY, v text)", "INSERT INTO dr VALUES (3, 'new')",
]


def _verify(c: str, table: str, capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["-c", c, "verify", "--table", table, "--type", "cow", "-o", "json"])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else {"error": out.err.strip()}


def _refused(lake, key: int) -> dict:
    row = next(r for r in lake.select(["id", "__rejects"]).to_pylist() if r["id"] == key)
    return json.loads(row["__rejects"] or "{}")


def _edges_landed(p) -> None:
    """What a lake user reads of the edge values (docs/types.md, "Edge values and DDL, measured")."""
    from hudi_cdc.lake.reader import read_arrow

    lake = read_arrow(p.base_path("edges", "COPY_ON_WRITE"))
    cols = ["id", "dl", "e", "tmtz", "iv", "m", "r4", "rtz", "vb", "ci", "s", "iarr", "earr", "n", "cp", "bx", "tq",
            "narr", "ia", "ma", "nma", "xa", "vba", "pta", "ba", "tva", "ena", "cpa", "tqa", "bxa", "hs", "i2", "ema",
            "nneg", "ntiny", "fna",
            "_hoodie_record_key"]
    rows = {r["id"]: r for r in lake.select(cols).to_pylist()}
    # Hudi's record keys of a date, numeric and timestamp (milliseconds), the bootstrap's and the stream's alike
    assert rows[1]["_hoodie_record_key"] == "id:1,kd:2024-02-29,kn:12.50,ktz:2024-01-01 08:00:00.123", rows[1]
    assert rows[11]["_hoodie_record_key"] == "id:11,kd:1999-12-31,kn:-0.01,ktz:2000-01-01 00:00:00.0", rows[11]
    for k in (1, 11):  # snapshot and streamed alike
        assert rows[k]["dl"] == [1, None, 3] and rows[k]["e"] == "mid" and rows[k]["tmtz"] == "08:01:00Z"
        assert rows[k]["iv"] == "P1Y2M3DT0H0M0S" and str(rows[k]["m"]) == "-92233720368547758.08"
        assert rows[k]["rtz"] == '["2024-01-01 00:00:00+00",infinity)' and rows[k]["vb"] == "10"
        assert rows[k]["s"] == "" and rows[k]["iarr"] == [] and rows[k]["earr"] == [] and rows[k]["n"] is None
        # types Debezium does not know: their text (pgjdbc's for the geometric ones)
        assert (rows[k]["cp"], rows[k]["bx"], rows[k]["tq"]) == ("(1,a)", "(1.5,1.0),(0.0,0.0)", "'a' & !'b'"), rows[k]
    assert rows[2]["cp"] == rows[12]["cp"] == "(,)" and rows[3]["cp"] is None
    # interval[] as Debezium's ISO form of an interval (as iv), money[] as decimal(38,2) (as m): read by key
    # by capture (Debezium leaves them out); snapshot rows (1), streamed inserts (11), streamed UPDATEs (2, 12)
    for k in (1, 11):
        assert rows[k]["ia"] == ["P0Y0M1DT0H0M0S", None] and rows[k]["ma"] == [Decimal("1.50"), None], rows[k]
    assert rows[2]["ia"] == ["P0Y1M-1DT0H0M0S", "P0Y0M0DT-4H-5M-6.78S", None], rows[2]
    assert rows[2]["ma"] == [Decimal("-92233720368547758.08"), Decimal("92233720368547758.07"), None], rows[2]
    assert (rows[12]["ia"], rows[12]["ma"], rows[3]["ia"], rows[3]["ma"]) == ([], [], None, None)
    texts = {"nma": ["ab", None], "xa": ["<a/>", None], "vba": ["0010", None], "pta": ["(1,2)", None],
             "ba": ["1", "0", None], "tva": ["'a' 'b'", None], "ena": ["low", None], "cpa": ["(1,a)", None],
             "tqa": ["'a' & 'b'", None], "bxa": ["(1,1),(0,0)", None]}
    for k in (1, 4):  # streamed, snapshot
        assert {c: rows[k][c] for c in texts} == texts, rows[k]
    assert {rows[3][c] for c in texts} == {None}
    for k in (1, 4):  # the hstore as Debezium's JSON; the 2-D array NULL, its text kept; the domain array read by key
        assert json.loads(rows[k]["hs"]) == {"a": "1", "b c": None} and rows[k]["ema"] == [None, "x@y"], rows[k]
        assert rows[k]["i2"] is None and _refused(lake, k)["i2"]["value"] == "{{1,2},{3,NULL}}", _refused(lake, k)
        assert (rows[k]["nneg"], rows[k]["ntiny"]) == (Decimal("-9999900"), Decimal("0.00123")), rows[k]
        assert math.isnan(rows[k]["fna"][0]) and rows[k]["fna"][1] is None, rows[k]  # a float's NaN is a value
    for k, special in ((1, "NaN"), (11, "NaN"), (2, "Infinity"), (12, "Infinity"), (3, "-Infinity")):
        assert _refused(lake, k)["n"]["value"] == special, (k, _refused(lake, k))  # read from the database
    for k in (3, 13):  # NaN / -Infinity elements of a numeric[] (Debezium: NULL elements): refused as a whole, as
        # an element beyond decimal(38,18) is (rows 2, 12): NULL, the database's text kept
        assert rows[k]["narr"] is None and _refused(lake, k)["narr"]["value"] == "{NaN,2,NULL,-Infinity}", rows[k]
    assert rows[1]["narr"][0] is None and "narr" not in _refused(lake, 1)  # a real NULL element: nothing refused
    assert rows[12]["r4"] == "empty" and rows[12]["iv"] == "P-178000000Y0M0DT0H0M0S" and rows[12]["earr"] == [""]
    assert len(rows[2]["s"]) == 300_001 and rows[13]["s"] == "😀 4-byte" and rows[12]["ci"] == "ß"
    for k in (2, 12):  # past 294247 AD: Debezium's long overflowed (kept as it came), Spark's string parse too
        assert _refused(lake, k)["ts"]["value"] == "-9223372036853775810", _refused(lake, k)
        assert _refused(lake, k)["tstz"]["value"] == "+294276-12-31T23:59:59.999999Z"
    assert _refused(lake, 4)["n"]["value"].startswith("0x") and _refused(lake, 5)["n"]["value"] == "0." + "0" * 99 + "1"


@pytest.mark.postgres
def test_postgres_edge_values_and_ddl_land_or_are_kept(tmp_path, pg_database, capsys, caplog, inprocess_jobs):
    db = pg_database("edges")
    _sql(db, *EDGE_DDL, *[f"INSERT INTO edges ({EDGE_COLUMNS}) VALUES " + r.format(id=i)
                          for i, r in enumerate(ROWS, 1)], TEXT_ARRAYS.format(id=4), *DDL_TABLES)
    d = tmp_path / "p"
    assert main(["init", str(d), "--from-database", "--dbname", db["name"], "--user", db["user"], "--host", db["host"],
                 "--port", str(db["port"]), "--password-env", db["password_env"]]) == 0
    cfg = d / "hudi-cdc.yaml"
    doc = yaml.safe_load(cfg.read_text())
    assert {"edges", "ddl", "ren", "dr", "parted", "Order_Items"} <= set(doc["tables"])
    doc["spark"] = {"master": "local[2]", "driver_memory": "1g", "shuffle_partitions": 2}
    doc["tables"]["nokey"] = {**doc["tables"]["ren"], "topic": "edges.public.nokey", "record_key": "id"}
    for t in doc["tables"].values():
        t["table_types"] = ["COPY_ON_WRITE"]
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False))
    c = str(cfg)
    assert main(["-c", c, "capture", "--once", "--timeout", "300"]) == 0
    assert caplog.text.count("public.ren: a key (id INT32, t io.debezium.time.ZonedTime) with no database text: "
                             "values the events cannot carry (n) are not looked up") == 1, caplog.text
    assert caplog.text.count("public.ren: a key (id INT32, t io.debezium.time.ZonedTime) with no database text: "
                             "its interval[] columns (ia), which Debezium leaves out") == 1, caplog.text
    assert main(["-c", c, "bootstrap"]) == 0
    # one round: the values streamed and every DDL step. A renamed table: one warning line, the others are
    # captured; a dropped and re-created table: published again and re-taken by an incremental snapshot
    _sql(db, *ROUND_1, *ROUND_2, *ROUND_3)
    capsys.readouterr()
    assert main(["-c", c, "capture", "--once", "--timeout", "300"]) == 0
    err = capsys.readouterr().err.strip()
    assert "ddl: column code: its type changed (string -> int) in public.ddl" in err, err
    # no other table is re-taken: the streamed schemas of every edge type equal the snapshot's (an enum label
    # added, SET DEFAULT and SET NOT NULL change no value)
    assert err.count("its type changed") == 1 and "became NOT NULL" not in err and "label(s)" not in err, err
    # ATTACH / DETACH PARTITION move rows without change events: said, with the way to re-take the table
    assert "warning: table public.parted: partitions changed since the last capture (attached: parted_2; " \
           "detached: parted_1)" in err, err
    assert "table public.ren of the pipeline does not exist in the database (renamed or dropped?): not " \
           "captured, the other tables are" in err, err
    assert "table public.dr was dropped and created again" in err and "snapshot of dr requested" in err, err
    assert "`hudi-cdc capture snapshot --table parted --replace`" in err, err
    # re-taken by a blocking snapshot (an incremental one reads no row of a partitioned table), beside dr's
    assert main(["-c", c, "capture", "snapshot", "--table", "parted", "--replace"]) == 0
    said = []  # a PostgreSQL --once run stops at its end marker: the snapshot goes on in the next one; under
    # load a run can end before its signal (transactions open at the floor) or before Debezium's first chunk
    for _ in range(6):
        assert main(["-c", c, "capture", "--once", "--timeout", "300"]) == 0
        said.append(capsys.readouterr().err)
        main(["-c", c, "capture", "snapshot", "--status", "-o", "json"])
        status = json.loads(capsys.readouterr().out)
        if all(s["state"] == "completed" for s in status):
            break
    assert all(s["state"] == "completed" for s in status), (status, said)
    status_of = {s["table"]: s for s in status}
    capsys.readouterr()
    assert main(["-c", c, "stream", "--all", "--once"]) == 0
    streamed = capsys.readouterr().err
    # the updates of snapshot rows keyed by a date, numeric and timestamptz: located by hudi-cdc, no duplicates
    assert ".edges: committed" in streamed and ".edges: keys located by Hudi's index" not in streamed, streamed
    got = {t: _verify(c, t, capsys) for t in doc["tables"]}
    # ALTER COLUMN TYPE ... USING (re-taken: the rows it rewrote read code * 100), SET/DROP DEFAULT, SET/DROP NOT
    # NULL; ADD PRIMARY KEY; DROP + CREATE re-taken
    assert got["ren"][0] == 6 and "public.ren not found" in got["ren"][1]["error"], got["ren"]
    for t in ("ddl", "nokey", "dr", "Order_Items"):
        assert got[t][0] == 0 and got[t][1]["equal"], (t, got[t])
    assert got["Order_Items"][1]["db_rows"] == 3
    assert got["dr"][1]["db_rows"] == 1 and got["ddl"][1]["db_rows"] == 8 and "spans" in got["ddl"][1]["columns"]
    # ATTACH / DETACH PARTITION write no change events (the attached rows were missing, the detached kept):
    # re-taken whole, as the database holds it now
    assert got["parted"][0] == 0 and got["parted"][1]["equal"], got["parted"]
    assert status_of["parted"]["rows"] == got["parted"][1]["db_rows"] > 0, status_of
    # the edge values: every one lands exactly or is kept in __rejects (numeric NaN/Infinity, which Debezium
    # sends as NULL, read from the database by capture), except the timestamp past 294247 AD (kept as
    # Debezium's overflowed long); composite, geometric and tsquery: their text; interval[], money[] (Debezium
    # leaves them out): read by key by capture, compared equal
    code, edges = got["edges"]
    assert code == 10 and edges["db_rows"] == edges["lake_rows"] == 10 and edges["not_in_lake"] == [], edges
    assert {"ia", "ma"} <= set(edges["columns"]), edges
    assert edges["column_differences"] == {"ts": 2}, edges
    assert edges["rejected_columns"] == {"tstz": 2, "narr": 4, "n": 10, "i2": 2}, edges
    from hudi_cdc.config import load_pipeline

    _edges_landed(load_pipeline(cfg))


MARIA_DDL = (  # the key holds a DATE, a DECIMAL and a DATETIME(6): capture reads the zero dates by it
    # (specials.py, zerodates.py), the streamer locates the rows by Hudi's text of them (keytext.py)
    "CREATE TABLE edges (id INT, kd DATE NOT NULL DEFAULT '2024-02-29', kn DECIMAL(10,2) NOT NULL DEFAULT 12.50, "
    "kt DATETIME(6) NOT NULL DEFAULT '2024-01-01 10:00:00.123456', zd DATE, zdn DATE NOT NULL DEFAULT '2000-01-01', "
    "dt6 DATETIME(6), ts6 TIMESTAMP(6) NULL, tm TIME(6), yr YEAR, b5 BIT(5), b64 BIT(64), st SET('a','b','c'), "
    "en ENUM('x','y'), dec65 DECIMAL(65,30), ub BIGINT UNSIGNED, j JSON, s VARCHAR(20) CHARACTER SET utf8mb4, "
    "lt LONGTEXT, pt POINT, PRIMARY KEY (id, kd, kn, kt))")
MARIA_COLUMNS = "id, zd, zdn, dt6, ts6, tm, yr, b5, b64, st, en, dec65, ub, j, s, lt, pt"
MARIA_ROWS = [
    "({id}, '0000-00-00', '0000-00-00', '1000-01-01 00:00:00.000000', '1970-01-01 00:00:01.000000', "
    "'838:59:59.000000', 1901, b'11111', b'1111111111111111111111111111111111111111111111111111111111111111', "
    "'a,c', 'x', 99999999999999999999999999999999999.999999999999999999999999999999, 18446744073709551615, "
    "'{{\"a\": [1, null]}}', '😀 𝄞', repeat('x', 100000), ST_PointFromText('POINT(1 2)'))",
    "({id}, '9999-12-31', '9999-12-31', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999', "
    "'-838:59:59.000000', 2155, b'00000', 0, '', 'y', "
    "-99999999999999999999999999999999999.999999999999999999999999999999, 0, '[]', '', '', NULL)",
    "({id}, '2024-02-29', '0001-01-01', '2024-02-29 12:00:00.000001', NULL, '-00:00:00.000001', 0, NULL, NULL, "
    "NULL, NULL, 0.000000000000000000000000000001, NULL, NULL, NULL, NULL, NULL)",
    "({id}, NULL, '1970-01-01', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
]
MARIA_STEPS = [  # the values streamed, then column DDL and a table dropped and created again
    "ALTER TABLE edges ALTER COLUMN kd SET DEFAULT '1999-12-31', ALTER COLUMN kn SET DEFAULT -0.01, "
    "ALTER COLUMN kt SET DEFAULT '2000-01-01 00:00:00'",  # the streamed rows' key values
    *[f"INSERT INTO edges ({MARIA_COLUMNS}) VALUES " + r.format(id=10 + i) for i, r in enumerate(MARIA_ROWS, 1)],
    "UPDATE edges SET s = 'é' WHERE id = 1",
    "ALTER TABLE ddl MODIFY code INT", "UPDATE ddl SET code = code * 10 WHERE id = 1",
    "ALTER TABLE ddl ALTER COLUMN b SET DEFAULT 'y'", "INSERT INTO ddl (id, code, c) VALUES (6, 6, 6)",
    "ALTER TABLE ddl ALTER COLUMN b DROP DEFAULT", "INSERT INTO ddl (id, code, c) VALUES (7, 7, 7)",
    "ALTER TABLE ddl MODIFY c INT NULL", "INSERT INTO ddl (id, code, b) VALUES (8, 8, 'n')",
    "ALTER TABLE ddl MODIFY a INT NOT NULL DEFAULT 0", "UPDATE ddl SET a = 99 WHERE id = 2",
    # instant ADD COLUMN ... DEFAULT: no row events for the rows that existed; the next change shows the column
    "ALTER TABLE ddl ADD COLUMN score INT DEFAULT 7", "INSERT INTO ddl (id, code, c, a) VALUES (9, 9, 9, 9)",
    "DROP TABLE dr", "CREATE TABLE dr (id INT PRIMARY KEY, v TEXT)", "INSERT INTO dr VALUES (3, 'new')",
]


@pytest.mark.mariadb
def test_mariadb_edge_values_and_ddl_land_or_are_kept(tmp_path, mariadb, mariadb_database, capsys, inprocess_jobs):
    from tests.capture.test_capture_mysql import _capture
    from tests.capture.test_capture_mysql import _sql as maria_sql
    from tests.cli import run_cli, run_main

    db = mariadb_database("edges_shop")
    maria_sql(mariadb, "edges_shop", "SET SESSION sql_mode = ''", MARIA_DDL,
              *[f"INSERT INTO edges ({MARIA_COLUMNS}) VALUES " + r.format(id=i) for i, r in enumerate(MARIA_ROWS, 1)],
              "CREATE TABLE ddl (id INT PRIMARY KEY, code VARCHAR(10), b VARCHAR(5) DEFAULT 'x', c INT NOT NULL, "
              "a INT)",
              "INSERT INTO ddl (id, code, c, a) VALUES (1, '1', 1, 1), (2, '2', 2, NULL), (3, '3', 3, 3)",
              "CREATE TABLE dr (id INT PRIMARY KEY, v TEXT)", "INSERT INTO dr VALUES (1, 'old'), (2, 'old')")
    tables = {t: {"topic": f"shop.{db['name']}.{t}", "record_key": "id", "table_types": ["COPY_ON_WRITE"]}
              for t in ("edges", "ddl", "dr")}
    tables["edges"]["record_key"] = ["id", "kd", "kn", "kt"]
    doc = {"pipeline": "edges", "source": {"root": "landing", "database": {**db, "flush_size": 100}},
           "lake": {"root": "lake", "hive_database": "edges"}, "spark": {"shuffle_partitions": 2}, "tables": tables}
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    assert _capture(tmp_path)["events"] == 4 + 3 + 2
    run_main("bootstrap", cwd=tmp_path)
    # incremental snapshots write the signal table (Debezium's chunk windows too): CREATE once, INSERT
    maria_sql(mariadb, "edges_shop", "GRANT CREATE, INSERT ON edges_shop.* TO 'hudi_cdc'@'127.0.0.1'")
    maria_sql(mariadb, "edges_shop", "SET SESSION sql_mode = ''", *MARIA_STEPS)
    # the ADD COLUMN ... DEFAULT requests an incremental snapshot of ddl (capture/defaults.py), the DROP and CREATE
    # of dr, read into the schema history, a re-take of dr at the next run's start (capture/tablelife.py): a --once
    # run that carries a snapshot out finishes it; one that saw the new column only at its end leaves it to the next
    events, said = [], []
    for _ in range(3):
        out = run_cli("capture", "--once", "--timeout", "300", "-o", "json", cwd=tmp_path, check=True)
        events.append(json.loads(out.stdout)["events"])
        said.append(out.stderr)
        status = json.loads(run_cli("capture", "snapshot", "--status", "-o", "json", cwd=tmp_path, check=True).stdout)
        if [(s["table"], s["state"]) for s in status] == [("ddl", "completed"), ("dr", "completed")]:
            break
    assert [(s["table"], s["state"], s["rows"], s["replace"]) for s in status] == [
        ("ddl", "completed", 7, False), ("dr", "completed", 1, True)], status
    # MODIFY VARCHAR -> INT and MODIFY ... NOT NULL over NULLs (which MariaDB fills in with no row events) ask for
    # a re-take of ddl too (capture/fieldtypes.py): each request carried out reads ddl's 7 rows again
    said = "".join(said)
    assert "ddl: column code: its type changed (string -> int)" in said and "column a: it became NOT NULL" in said, said
    assert "edges: column" not in said and "dr: column" not in said, said  # their streamed schemas: the snapshot's
    # the streamed changes, ddl's 7 rows again (once or more), dr's truncate and its one row
    again = sum(events) - (4 + 1 + 5 + 1 + 1 + 1 + 1)
    assert again >= 7 and again % 7 == 0, events
    capsys.readouterr()
    run_main("stream", "--all", "--once", cwd=tmp_path)
    streamed = capsys.readouterr().err
    assert ".edges: committed" in streamed and ".edges: keys located by Hudi's index" not in streamed, streamed
    got = {}
    for t in tables:
        out = run_cli("verify", "--table", t, "--type", "cow", "-o", "json", cwd=tmp_path)
        got[t] = (out.returncode, json.loads(out.stdout) if out.stdout.strip() else out.stderr)
    # a zero date (Debezium: NULL, or 2000-01-01, the NOT NULL column's default): NULL, kept in __rejects (read
    # from the database by capture); YEAR 0000 as 2000 (snapshot) or 1900 (binlog), Debezium's values;
    # DECIMAL(65,30) beyond 38 digits: kept in __rejects
    code, edges = got["edges"]
    assert code == 10 and edges["column_differences"] == {"yr": 2} and edges["lake_rows"] == 8, edges
    assert edges["rejected_columns"] == {"dec65": 4, "zd": 2, "zdn": 2}, edges
    from hudi_cdc.config import load_pipeline
    from hudi_cdc.lake.reader import read_arrow

    lake = read_arrow(load_pipeline(tmp_path / "hudi-cdc.yaml").base_path("edges", "COPY_ON_WRITE"))
    rows = {r["id"]: r for r in lake.select(["id", "zdn", "yr", "b5", "tm", "__rejects", "_hoodie_record_key"])
            .to_pylist()}
    # row 1 updated: located by Hudi's text of a DATE, DECIMAL and DATETIME(6) key (milliseconds), no duplicate
    assert rows[1]["_hoodie_record_key"] == "id:1,kd:2024-02-29,kn:12.50,kt:2024-01-01 10:00:00.123", rows[1]
    assert rows[11]["_hoodie_record_key"] == "id:11,kd:1999-12-31,kn:-0.01,kt:2000-01-01 00:00:00.0", rows[11]
    assert str(rows[13]["zdn"]) == "0001-01-01"  # no two-digit years
    for k in (1, 11):
        assert rows[k]["zdn"] is None and json.loads(rows[k]["__rejects"])["zdn"]["value"] == "0000-00-00", rows[k]
    assert (rows[3]["yr"], rows[13]["yr"], rows[12]["yr"]) == (2000, 1900, 2155)
    assert rows[11]["b5"] == "11111" and rows[12]["tm"] == "-838:59:59.000000"
    # ADD COLUMN ... DEFAULT and MODIFY ... NOT NULL (which turned the NULLs into 0 with no row events): the
    # incremental snapshots they requested gave every row the database's values
    assert got["ddl"][0] == 0 and got["ddl"][1]["equal"] and got["ddl"][1]["db_rows"] == 7, got["ddl"]
    assert "score" in got["ddl"][1]["columns"], got["ddl"]
    ddl = {r["id"]: r for r in read_arrow(load_pipeline(tmp_path / "hudi-cdc.yaml").base_path("ddl", "COPY_ON_WRITE"))
           .select(["id", "a", "score"]).to_pylist()}
    assert {k: (r["a"], r["score"]) for k, r in ddl.items()} == {
        1: (1, 7), 2: (99, 7), 3: (3, 7), 6: (0, 7), 7: (0, 7), 8: (0, 7), 9: (9, 7)}, ddl
    # DROP TABLE writes no row events, but the schema history has it: the table was re-taken (--replace), the
    # dropped table's rows are gone
    assert got["dr"][0] == 0 and got["dr"][1]["equal"] and got["dr"][1]["db_rows"] == 1, got["dr"]
