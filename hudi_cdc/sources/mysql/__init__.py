"""MySQL-family sources (source.database.kind: mysql | mariadb): source.py is their base.Source; check.py
`source check`; init.py `init --from-database`; binlog.py and settings.py what capture's embedded engine
runs, signals.py its incremental snapshots (`capture snapshot`), tablelife.py a table dropped and created
again (from the schema history); verify.py `verify`'s database side; connector.py the Kafka Connect
connector; local.py a throwaway MariaDB server for development and tests."""
