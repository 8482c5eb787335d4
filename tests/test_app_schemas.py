"""Application schemas as users have them, through init --from-database -> capture -> bootstrap -> capture ->
stream -> verify: a schema other than public, a quoted mixed-case table name, a uuid key, and a declaratively
partitioned table (a composite key with a date, rows moving between partitions) whose changes PostgreSQL
publishes as the partitions' unless the publication says publish_via_partition_root."""

from __future__ import annotations

import pytest
import yaml

from hudi_cdc.cli import main
from tests.test_capture import _sql

pytestmark = [pytest.mark.postgres, pytest.mark.spark]


def test_schema_quoted_name_uuid_key_and_partitioned_table_verify_equal(tmp_path, pg_database, capsys):
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
         "FROM generate_series(1, 100) g")
    d = tmp_path / "p"
    assert main(["init", str(d), "--from-database", "--dbname", db["name"], "--user", db["user"], "--host", db["host"],
                 "--port", str(db["port"]), "--password-env", db["password_env"], "--schema", "app"]) == 0
    cfg = d / "hudi-cdc.yaml"
    doc = yaml.safe_load(cfg.read_text())
    assert {t["topic"] for t in doc["tables"].values()} == {"appschemas.app.Orders", "appschemas.app.events"}
    doc["spark"] = {"master": "local[2]", "driver_memory": "1g", "shuffle_partitions": 2}
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False))
    c = str(cfg)
    assert main(["-c", c, "capture", "--once", "--timeout", "300"]) == 0
    assert main(["-c", c, "bootstrap"]) == 0
    _sql(db, "UPDATE app.events SET payload = '{\"x\": 1}' WHERE id < 10",
         "UPDATE app.events SET day = DATE '2025-03-01' WHERE id = 50",  # into the other partition
         "DELETE FROM app.events WHERE id BETWEEN 90 AND 95",
         "DELETE FROM app.\"Orders\" WHERE amount < 10",
         "UPDATE app.\"Orders\" SET region = 'moved' WHERE amount > 25")
    assert main(["-c", c, "capture", "--once", "--timeout", "300"]) == 0
    for table in doc["tables"]:
        assert main(["-c", c, "stream", "--table", table, "--once"]) == 0
        for tt in ("cow", "mor"):
            assert main(["-c", c, "verify", "--table", table, "--type", tt]) == 0, (table, tt)

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
