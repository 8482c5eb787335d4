"""Application schemas as users have them, through init --from-database -> capture -> bootstrap -> capture ->
stream -> verify: a schema other than public, a quoted mixed-case table name, a uuid key, and a declaratively
partitioned table (a composite key with a date, rows moving between partitions) whose changes PostgreSQL
publishes as the partitions' unless the publication says publish_via_partition_root; column names Avro
cannot take ("Order Date", "user-id", "1st": Order_Date, user_id, _1st in the lake) and types with no lake
twin (enum, interval, money, inet, cidr, macaddr, point, int4range, tsvector, xml, an array with a NULL)."""

from __future__ import annotations

import json

import pytest
import yaml

from hudi_cdc.cli import main
from tests.capture.test_capture import _sql

pytestmark = [pytest.mark.postgres, pytest.mark.spark]


def test_schema_quoted_name_uuid_key_and_partitioned_table_verify_equal(tmp_path, pg_database, capsys, inprocess_jobs):
    db = pg_database("appschemas")
    _sql(db, "CREATE SCHEMA app",
         'CREATE TABLE app."Orders" (id uuid PRIMARY KEY, region text NOT NULL, amount numeric(12,2), '
         "created timestamptz DEFAULT now())",
         "CREATE TABLE app.events (id bigint, day date NOT NULL, payload jsonb, PRIMARY KEY (id, day)) "
         "PARTITION BY RANGE (day)",
         "CREATE TABLE app.events_2024 PARTITION OF app.events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
         "CREATE TABLE app.events_2025 PARTITION OF app.events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
         "INSERT INTO app.\"Orders\" SELECT gen_random_uuid(), 'r' || (g % 3), g * 1.5, now() "
         "FROM generate_series(1, 20) g",
         "INSERT INTO app.events SELECT g, DATE '2024-06-01' + g * 3, jsonb_build_object('g', g) "
         "FROM generate_series(1, 100) g",
         # column names Avro cannot take, and types with no lake twin (an enum, a range, a point, ...)
         "CREATE TYPE app.mood AS ENUM ('sad', 'ok', 'happy')",
         'CREATE TABLE app.odd (id serial PRIMARY KEY, "Order Date" date, "user-id" int, "select" text, "1st" int, '
         "m app.mood, iv interval, money_col money, ip inet, net cidr, mac macaddr, pt point, rng int4range, "
         "ts tsvector, x xml, arr int[])",
         'INSERT INTO app.odd ("Order Date", "user-id", "select", "1st", m, iv, money_col, ip, net, mac, pt, rng, ts, '
         "x, arr) SELECT DATE '2024-01-01' + g, g, 's' || g, g, 'ok', interval '1 day 2 hours', 12.34, '10.0.0.1', "
         "'10.0.0.0/8', '08:00:2b:01:02:03', point(g, 2), int4range(1, g + 2), to_tsvector('hello world'), "
         "'<a>1</a>', ARRAY[1, NULL, g] FROM generate_series(1, 20) g")
    d = tmp_path / "p"
    assert main(["init", str(d), "--from-database", "--dbname", db["name"], "--user", db["user"], "--host", db["host"],
                 "--port", str(db["port"]), "--password-env", db["password_env"], "--schema", "app"]) == 0
    cfg = d / "hudi-cdc.yaml"
    doc = yaml.safe_load(cfg.read_text())
    assert {t["topic"] for t in doc["tables"].values()} == {"appschemas.app.Orders", "appschemas.app.events",
                                                            "appschemas.app.odd"}
    doc["spark"] = {"master": "local[2]", "driver_memory": "1g", "shuffle_partitions": 2}
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False))
    c = str(cfg)
    assert main(["-c", c, "capture", "--once", "--timeout", "300"]) == 0
    assert main(["-c", c, "bootstrap"]) == 0
    _sql(db, "UPDATE app.events SET payload = '{\"x\": 1}' WHERE id < 10",
         "UPDATE app.events SET day = DATE '2025-03-01' WHERE id = 50",  # into the other partition
         "DELETE FROM app.events WHERE id BETWEEN 90 AND 95",
         "DELETE FROM app.\"Orders\" WHERE amount < 10",
         "UPDATE app.\"Orders\" SET region = 'moved' WHERE amount > 25",
         "UPDATE app.odd SET m = 'happy', iv = interval '3 months', \"select\" = NULL, \"Order Date\" = NULL "
         "WHERE id < 5", "DELETE FROM app.odd WHERE id = 7")
    assert main(["-c", c, "capture", "--once", "--timeout", "300"]) == 0
    assert main(["-c", c, "stream", "--all", "--once"]) == 0  # every table's rounds in one JVM
    for tt in ("cow", "mor"):  # every table, one line each
        capsys.readouterr()
        assert main(["-c", c, "verify", "--all", "--type", tt]) == 0, tt
        assert capsys.readouterr().out.count(": equal (") == len(doc["tables"])
    capsys.readouterr()
    assert main(["-c", c, "verify", "--table", "odd", "--type", "mor", "-o", "json"]) == 0
    compared = json.loads(capsys.readouterr().out)["columns"]
    assert {"Order_Date", "user_id", "select", "_1st", "pt", "rng"} <= set(compared) and len(compared) == 15

    # a publication made before (or by hand) without publish_via_partition_root: one line with the fix
    pub = doc["source"]["database"].get("publication") or f"hudi_cdc_{doc['pipeline']}"
    _sql(db, f"ALTER PUBLICATION {pub} SET (publish_via_partition_root = false)")
    capsys.readouterr()
    assert main(["-c", c, "capture", "--once", "--timeout", "300"]) == 11
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "app.events" in err, err
    assert f"ALTER PUBLICATION {pub} SET (publish_via_partition_root = true);" in err, err
    capsys.readouterr()
    assert main(["-c", c, "source", "check"]) != 0  # `source check` names it too, with the same fix
    out = capsys.readouterr()
    assert f"ALTER PUBLICATION {pub} SET (publish_via_partition_root = true);" in out.out + out.err
