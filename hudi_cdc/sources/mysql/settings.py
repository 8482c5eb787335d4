"""The MySQL-family server settings binlog capture cannot run without (log_bin, ROW format, FULL row
images), each with its fix; `source check` reports them, capture refuses without them."""

from __future__ import annotations

from hudi_cdc.errors import SourceError

REQUIRED = {"log_bin": "ON", "binlog_format": "ROW", "binlog_row_image": "FULL"}
FIXES = {
    "log_bin": "start the server with log_bin (on RDS/Aurora MySQL: a backup retention period above 0 turns "
               "binary logging on)",
    "binlog_format": "SET GLOBAL binlog_format = 'ROW' (my.cnf: binlog_format=ROW; on RDS/Aurora: binlog_format=ROW "
                     "in the DB (cluster) parameter group)",
    "binlog_row_image": "SET GLOBAL binlog_row_image = 'FULL' (my.cnf: binlog_row_image=FULL; on RDS/Aurora: "
                        "binlog_row_image=full in the parameter group)",
}


def server_settings(conn) -> dict[str, str]:
    names = ("log_bin", "binlog_format", "binlog_row_image", "server_id", "gtid_mode", "gtid_strict_mode",
             "binlog_expire_logs_seconds", "expire_logs_days", "version", "basedir", "binlog_order_commits")
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN (" + ",".join(["%s"] * len(names)) + ")", names)
        return {str(k).lower(): str(v) for k, v in cur.fetchall()}


def check_binlog_settings(conn) -> None:
    """The settings capture cannot run without; one line with the fix."""
    got = server_settings(conn)
    for name, want in REQUIRED.items():
        if got.get(name, "").upper() != want:
            raise SourceError(f"{name} is {got.get(name, 'not set')}, change capture needs {want}: {FIXES[name]}")
