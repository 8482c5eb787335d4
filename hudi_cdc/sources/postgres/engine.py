"""PostgreSQL's Debezium connector as capture's embedded engine runs it (pgoutput on the pipeline's slot
and publication, heartbeats, transaction metadata, incremental-snapshot signals), and what
`capture --drop-slot` removes: the slot, the publication and the offsets."""

from __future__ import annotations

import re

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import SourceError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.base import UNWRAP, Progress, good_copy, offsets_file
from hudi_cdc.sources.postgres import db, signals
from hudi_cdc.sources.postgres.capture import marker_prefix
from hudi_cdc.sources.postgres.heartbeat import heartbeat_prefix, heartbeat_properties
from hudi_cdc.sources.shaping import debezium_properties

CONNECTOR = "io.debezium.connector.postgresql.PostgresConnector"
# Debezium's encodings the lake types convert (lake_types.py): intervals as ISO-8601 strings
# column names Avro cannot take ("Order Date", "user-id") land with "_" for each invalid character, as the
# Kafka Connect Avro converter needs too (sources.tables.lake_name is the same rule)
TYPE_HANDLING = {"interval.handling.mode": "string", "field.name.adjustment.mode": "avro",
                 "schema.name.adjustment.mode": "avro"}
# BEGIN/END records: files land at transaction boundaries (capture/txn.py)
TXN_PROPERTIES = {"provide.transaction.metadata": "true"}


def engine_properties(pipeline: Pipeline, password: str | None) -> dict[str, str]:
    """The embedded engine's configuration (Kafka Connect source connector properties)."""
    db = src.database(pipeline)
    tables = src.source_tables(pipeline)
    props = {
        "name": f"hudi-cdc-{pipeline.pipeline}",
        "connector.class": CONNECTOR,
        "tasks.max": "1",
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(offsets_file(pipeline)),
        "offset.flush.interval.ms": "0",  # commit after every batch, up to what is landed
        "offset.flush.timeout.ms": "60000",
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        "database.dbname": db.name,
        "topic.prefix": src.topic_prefix(pipeline),
        "plugin.name": "pgoutput",
        "slot.name": pipeline.slot_name,
        "publication.name": pipeline.publication_name,
        "publication.autocreate.mode": "disabled",  # capture creates it, for exactly these tables
        "table.include.list": ",".join(re.escape(t.qualified) for t in tables),
        "snapshot.mode": "initial",
        "tombstones.on.delete": "false",
        "skipped.operations": "none",  # TRUNCATE too (Debezium skips it by default); unwrap.py lands it
        **heartbeat_properties(db, marker_prefix(pipeline)),
        # this run's end markers, and the heartbeat messages (heartbeat.py)
        "message.prefix.include.list": ",".join(re.escape(m) for m in (marker_prefix(pipeline),
                                                                       heartbeat_prefix(marker_prefix(pipeline)))),
        "errors.max.retries": "0",
        **TXN_PROPERTIES,  # BEGIN/END records: files land at transaction boundaries (txn.py)
        **TYPE_HANDLING,
        # a type Debezium does not know (composite, box, tsquery, ...) comes as the bytes of its text, which
        # capture lands as a string (capture/textforms.py); left out of the events otherwise. interval[] and
        # money[] stay out even so (no schema in PostgresValueConverter): capture reads them (capture/pg_arrays.py)
        "include.unknown.datatypes": "true",
        **UNWRAP,
        **signals.properties(pipeline),  # incremental snapshots (`capture snapshot`, signals.py)
        # excluded and masked columns never land (sources/shaping.py); the salt from source.mask_salt_env
        **debezium_properties(pipeline, tables),
    }
    if password is not None:
        props["database.password"] = password
    return props


def drop_state(pipeline: Pipeline, progress: Progress) -> dict[str, bool]:
    """capture --drop-slot: the replication slot (refused while a capture reads it), the publication and
    the offsets (they point into the dropped slot: the next capture takes a new snapshot)."""
    from psycopg import sql

    slot, pub = pipeline.slot_name, pipeline.publication_name
    with db.connect(pipeline) as conn:
        db.check_slot_free(conn, slot)  # active -> one-line refusal
        had_slot = conn.execute("SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s",
                                (slot,)).fetchone()[0] > 0
        if had_slot:
            conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            progress(f"dropped replication slot {slot}")
        had_pub = conn.execute("SELECT count(*) FROM pg_publication WHERE pubname = %s", (pub,)).fetchone()[0] > 0
        if had_pub:
            try:
                conn.execute(sql.SQL("DROP PUBLICATION {}").format(sql.Identifier(pub)))
            except Exception as exc:  # psycopg.Error: not its owner
                raise SourceError(f"cannot drop publication {pub}: {' '.join(str(exc).split())}") from None
            progress(f"dropped publication {pub}")
    offsets = offsets_file(pipeline)
    had_offsets = offsets.exists()
    if had_offsets:
        offsets.unlink()
        progress(f"removed {offsets} (the next capture takes a new snapshot)")
    good_copy(pipeline).unlink(missing_ok=True)
    if not (had_slot or had_pub or had_offsets):
        progress(f"nothing to drop: no slot {slot}, publication {pub} or offsets")
    return {"slot": had_slot, "publication": had_pub, "offsets": had_offsets}
