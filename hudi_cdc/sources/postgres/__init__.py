"""PostgreSQL sources (source.database.kind: postgresql): source.py is its base.Source; check.py `source
check`; init.py `init --from-database`; engine.py, capture.py, heartbeat.py and signals.py what capture's
embedded engine runs; verify.py `verify`'s database side; connector.py the Kafka Connect connector;
local.py a throwaway cluster for development and tests (db.py, catalog.py, identity.py: the queries they share)."""
