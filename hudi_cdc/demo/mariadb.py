"""`hudi-cdc demo DIR --from-mariadb`: the whole path from a throwaway MariaDB, end to end, locally.

A MariaDB server of the demo's own (Debian's mariadb-server: binlog ROW/FULL, a free port, its data in
DIR/.hudi-cdc/mariadb, sources/mysql/local.py) is started; a database `shop` with a table `orders` of
typed columns (DECIMAL, TINYINT(1), ENUM, SET, DATE, DATETIME(6), TIMESTAMP(6), TIME, JSON, BIGINT
UNSIGNED) is filled with 200 rows; the pipeline file gets `source.database` with `kind: mariadb` (the
capture user's password only in the environment variable it names, random unless set). Then: capture
--once (the snapshot) -> bootstrap (CoW and MoR) -> changes by SQL (same-second updates of one key, a
delete, a partition move, a multi-row transaction, ALTER TABLE ADD COLUMN) -> capture
--once -> stream --once -> verify both table types -> order 1 in the lake and in the database.
Differences found by verify raise TablesDiffer (exit 10) after the rows are shown. The server is
stopped at the end (its data stays for the next run) unless ``keep_db``.

Re-running is safe: the server's data, the capture offsets and the tables stay in DIR, so a second run
takes no new snapshot, skips bootstrap and the changes (order 2 is gone: they ran), and verify passes.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml

from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline, load_pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.sources.mysql.local import LocalMariaDB

Progress = Callable[[str], None]
SERVER_DIR = Path(".hudi-cdc") / "mariadb"
DATABASE = "shop"
USER = "hudi_cdc"
PASSWORD_ENV = "HUDI_CDC_DEMO_MYSQL_PASSWORD"
ROWS = 200
SHOW_KEY = 1
COLUMNS = ("order_id", "customer", "region", "qty", "price", "paid", "size", "tags", "placed", "updated_at",
           "seen_at", "at_time", "doc", "big")
DDL = ("CREATE TABLE IF NOT EXISTS orders (order_id INT PRIMARY KEY, customer VARCHAR(40), "
       "region VARCHAR(10) NOT NULL, qty INT, price DECIMAL(10,2), paid TINYINT(1), size ENUM('S','M','L'), "
       "tags SET('new','gift'), placed DATE, updated_at DATETIME(6), seen_at TIMESTAMP(6) NULL, at_time TIME(6), "
       "doc JSON, big BIGINT UNSIGNED)")
CHANGES = (
    "UPDATE orders SET qty = qty + 1 WHERE order_id = 1",
    "UPDATE orders SET qty = qty + 1, customer = 'customer 1 (again)' WHERE order_id = 1",  # same second, same key
    "DELETE FROM orders WHERE order_id = 2",
    "UPDATE orders SET region = 'moved' WHERE order_id = 3",  # a partition move
    "START TRANSACTION",
    "INSERT INTO orders (order_id, customer, region, price, size, placed) VALUES (1001, 'new', 'eu', 9.99, 'L', "
    "'2024-02-29'), (1002, 'ü – 日本', 'us', 99999999.99, NULL, '1969-12-31')",
    "UPDATE orders SET paid = 1 - paid WHERE order_id BETWEEN 10 AND 19",
    "COMMIT",
    "ALTER TABLE orders ADD COLUMN note VARCHAR(20)",  # no DEFAULT: docs/mysql.md, DDL
    "UPDATE orders SET note = 'after the DDL', at_time = '-838:59:59' WHERE order_id = 5",
)


def pipeline_text(port: int) -> str:
    doc = {"pipeline": "shop",
           "source": {"root": "landing/topics",
                      "database": {"kind": "mariadb", "host": "127.0.0.1", "port": port, "name": DATABASE,
                                   "user": USER, "password_env": PASSWORD_ENV, "flush_size": 100}},
           "lake": {"root": "lake", "hive_database": "shop"},
           "spark": {"shuffle_partitions": 2},
           "tables": {"orders": {"topic": f"shop.{DATABASE}.orders", "record_key": "order_id",
                                 "partition_field": "region"}}}
    return ("# hudi-cdc demo --from-mariadb: the demo's own MariaDB (.hudi-cdc/mariadb)\n"
            + yaml.safe_dump(doc, sort_keys=False))


def _row(i: int) -> str:
    return (f"({i}, 'customer {i}', '{['eu', 'us', 'ap'][i % 3]}', {i % 17}, {i}.25, {i % 2}, "
            f"'{'SML'[i % 3]}', 'new,gift', '2024-02-29', '2024-01-02 03:04:05.{i:06d}', "
            f"'2024-06-01 12:00:00.5', '13:14:15.000016', '{{\"k\": {i}}}', 18446744073709551615)")


def start_server(directory: Path, progress: Progress) -> tuple[LocalMariaDB, Pipeline]:
    """The demo's server (started, the capture user's password set), and the pipeline file (written
    the first time, its port kept current)."""
    cfg = directory / "hudi-cdc.yaml"
    if cfg.exists():
        saved = load_pipeline(cfg).source.database
        if saved is None or saved.kind != "mariadb" or not (directory / SERVER_DIR / "data").is_dir():
            raise ConfigError(f"{cfg} is not a --from-mariadb demo's file: give the demo another directory")
    server = LocalMariaDB(directory / SERVER_DIR)
    if cfg.exists() and server.running():  # left running by --keep-db: where the file says
        server.port = load_pipeline(cfg).source.database.port  # type: ignore[union-attr]
    progress(f"starting MariaDB ({server.binary.name}) in {server.directory}")
    server.start()
    progress(f"MariaDB listens on 127.0.0.1:{server.port} (binlog ROW/FULL)")
    try:
        password = os.environ.get(PASSWORD_ENV) or secrets.token_urlsafe(18)
        os.environ[PASSWORD_ENV] = password  # capture and verify read it from there
        conn = server.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
                cur.execute(f"CREATE USER IF NOT EXISTS '{USER}'@'127.0.0.1' IDENTIFIED BY %s", (password,))
                cur.execute(f"ALTER USER '{USER}'@'127.0.0.1' IDENTIFIED BY %s", (password,))
                cur.execute(f"GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, BINLOG "
                            f"MONITOR ON *.* TO '{USER}'@'127.0.0.1'")
        finally:
            conn.close()
        cfg.write_text(pipeline_text(server.port))
        return server, load_pipeline(cfg)
    except BaseException:
        server.stop()
        raise


def load_rows(server: LocalMariaDB, progress: Progress) -> int:
    conn = server.connect(DATABASE)
    try:
        with conn.cursor() as cur:
            cur.execute(DDL)
            cur.execute("SELECT count(*) FROM orders")
            have = cur.fetchone()[0]
            if have:
                progress(f"{DATABASE}.orders holds {have} rows already: not loaded again")
                return 0
            cur.execute("INSERT INTO orders VALUES " + ", ".join(_row(i) for i in range(1, ROWS + 1)))
    finally:
        conn.close()
    progress(f"loaded {DATABASE}.orders: {ROWS} rows")
    return ROWS


def apply_changes(server: LocalMariaDB, progress: Progress) -> int:
    conn = server.connect(DATABASE)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM orders WHERE order_id = 2")
            if cur.fetchone() is None:
                progress("the demo's changes ran already (order 2 is gone): not run again")
                return 0
            for st in CHANGES:
                cur.execute(st)
                progress(f"ran {st}")
    finally:
        conn.close()
    return len(CHANGES)


@contextlib.contextmanager
def _hidden(var: str) -> Iterator[None]:
    """The password stays out of the Spark jobs' environment."""
    value = os.environ.pop(var, None)
    try:
        yield
    finally:
        if value is not None:
            os.environ[var] = value


def db_row(server: LocalMariaDB, key: int) -> dict | None:
    import pymysql

    conn = server.connect(DATABASE)
    try:
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute(f"SELECT {', '.join(COLUMNS[:6])} FROM orders WHERE order_id = %s", (key,))
            return cur.fetchone()
    finally:
        conn.close()


def run_mariadb_demo(directory: Path, *, keep_db: bool = False, progress: Progress = log_progress,
                     show: Progress = log_progress) -> dict:
    from hudi_cdc import pipeline as pipe
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.common.text import text_table
    from hudi_cdc.lake.reader import current_rows
    from hudi_cdc.sources.verify import TablesDiffer, VerifyResult, verify

    t0 = time.time()
    timings: dict = {}
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    server, p = start_server(directory, progress)
    results: list[VerifyResult] = []
    captured: list[int] = []
    try:
        load_rows(server, progress)
        for step in ("snapshot", "changes"):
            started = time.time()
            got = capture_once(p, progress=progress)
            captured.append(got.events)
            progress(f"capture --once: {'snapshot, ' if got.snapshot else ''}{got.events} events into {got.files} "
                     "file(s)")
            timings[f"capture_{step}_s"] = round(time.time() - started, 1)
            if step == "snapshot":
                started = time.time()
                if any(not pipe.table_exists(p, t, tt) for t, tt in p.targets()):
                    with _hidden(PASSWORD_ENV):
                        pipe.bootstrap(p, force=True, progress=progress)
                else:
                    progress("tables exist already: skipping bootstrap")
                timings["bootstrap_s"] = round(time.time() - started, 1)
                apply_changes(server, progress)
        started = time.time()
        with _hidden(PASSWORD_ENV):
            pipe.stream(p, "orders", once=True, progress=progress)
        timings["stream_s"] = round(time.time() - started, 1)
        for table, tt in p.targets():
            checked = verify(p, table, tt)
            progress(f"verify {checked.summary()}")
            results.append(checked)
        cols = list(COLUMNS[:6])
        for tt in p.table("orders").table_types:
            rows = current_rows(p, "orders", tt, keys=[str(SHOW_KEY)], columns=cols)
            progress(f"order {SHOW_KEY} in {p.base_path('orders', tt)} (read with hudi-rs):")
            show(text_table(rows, cols))
        row = db_row(server, SHOW_KEY)
        progress(f"order {SHOW_KEY} in the database ({DATABASE}.orders):")
        show(text_table([row] if row else [], cols))
    finally:
        if keep_db:
            progress(f"MariaDB left running on 127.0.0.1:{server.port} (--keep-db; a run without it stops it)")
        else:
            server.stop()
            progress(f"stopped MariaDB (its data stays in {server.directory} for the next run)")
    timings["total_s"] = round(time.time() - t0, 1)
    progress(f"timings: {timings}")
    differ = [r for r in results if not r.equal]
    if differ:
        raise TablesDiffer(f"verify: {len(differ)} of {len(results)} tables differ from the database: "
                           + "; ".join(r.summary() for r in differ))
    return {"timings": timings, "captured": captured, "verify": [r.to_dict() for r in results]}
