"""The source database of a pipeline, whatever its kind: its settings and password, the tables behind the
topics, and the names columns get in the lake (the kinds' own connections: postgres/db.py, mysql/binlog.py).

Topics name their source table the way Debezium names topics: ``<topic prefix>.<schema>.<table>``.
Every table of one pipeline shares the topic prefix (one connector per pipeline).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hudi_cdc.config import Pipeline
from hudi_cdc.config.settings import DatabaseSettings
from hudi_cdc.config.topic import kafka_topic
from hudi_cdc.errors import ConfigError


@dataclass(frozen=True)
class SourceTable:
    name: str  # the pipeline's table name
    topic: str
    schema: str
    table: str

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def landed_topic(self) -> str:
        """The Kafka topic Debezium gives its records (and the landing folder's name): config/topic.py."""
        return kafka_topic(self.topic)

    @property
    def sql_text(self) -> str:
        """The qualified name as a user types it in SQL: each part quoted only when it must be (sql_ident)."""
        return f"{sql_ident(self.schema)}.{sql_ident(self.table)}"

    @property
    def sql_name(self) -> str:
        return f'"{self.schema}"."{self.table}"'


# PostgreSQL's reserved key words (its documentation's appendix C), which a plain identifier cannot be
_RESERVED = frozenset("""all analyse analyze and any array as asc asymmetric authorization binary both case cast check
collate collation column concurrently constraint create cross current_catalog current_date current_role current_schema
current_time current_timestamp current_user default deferrable desc distinct do else end except false fetch for
foreign freeze from full grant group having ilike in initially inner intersect into is isnull join lateral leading
left like limit localtime localtimestamp natural not notnull null offset on only or order outer overlaps placing
primary references returning right select session_user similar some symmetric system_user table tablesample then to
trailing true union unique user using variadic verbose when where window with""".split())


def sql_ident(name: str) -> str:
    """An identifier as PostgreSQL SQL text: as it is when PostgreSQL reads it back unchanged (lower-case letters,
    digits, _; not a reserved word), else double-quoted (a mixed-case, spaced or reserved name)."""
    plain = bool(name) and (name[0] == "_" or "a" <= name[0] <= "z") and all(
        c == "_" or "a" <= c <= "z" or "0" <= c <= "9" for c in name)
    return name if plain and name not in _RESERVED else '"' + name.replace('"', '""') + '"'


def database(pipeline: Pipeline) -> DatabaseSettings:
    db = pipeline.source.database
    if db is None:
        raise ConfigError(f"source.database: needed for capture and verify, not set ({pipeline.source_file})")
    return db


def password(pipeline: Pipeline) -> str | None:
    db = database(pipeline)
    if not db.password_env:
        return None
    value = os.environ.get(db.password_env)
    if value is None:
        raise ConfigError(f"source.database.password_env: environment variable {db.password_env} is not set "
                          f"({pipeline.source_file})")
    return value


def source_tables(pipeline: Pipeline) -> list[SourceTable]:
    """Every source table of the pipeline: a routed table's shards each with its own topic (a pattern's
    shards listed from the database first: sources/routes.py's resolved)."""
    return [st for name in pipeline.tables for st in _tables_of(pipeline, name)]


def _topic_parts(pipeline: Pipeline, name: str) -> list[str]:
    topic = pipeline.table(name).topic
    parts = topic.rsplit(".", 2)
    if len(parts) != 3 or not all(parts):
        raise ConfigError(f"tables.{name}.topic: {topic!r} must be <topic prefix>.<schema>.<table>, as "
                          f"Debezium names topics ({pipeline.source_file})")
    return parts


def _tables_of(pipeline: Pipeline, name: str) -> list[SourceTable]:
    t = pipeline.table(name)
    parts = _topic_parts(pipeline, name)
    if t.route is None:
        return [SourceTable(name, t.topic, parts[1], parts[2])]
    if t.route.pattern is not None:
        raise ConfigError(f"tables.{name}.route.pattern: its source tables are listed from the database "
                          "(capture, verify and source check do); list them in route.tables for this command "
                          f"({pipeline.source_file})")
    return [SourceTable(name, f"{parts[0]}.{shard}", *shard.split(".")) for shard in t.route.tables]


def source_table(pipeline: Pipeline, name: str) -> SourceTable:
    """The one source table of a lake table (a routed table has several: shards())."""
    if pipeline.table(name).route is not None:
        raise ConfigError(f"tables.{name} is routed from several source tables (route); this command takes a "
                          f"table with one ({pipeline.source_file})")
    return _tables_of(pipeline, name)[0]


def shards(pipeline: Pipeline, name: str) -> list[SourceTable]:
    """A lake table's source tables: its one table, or a routed table's shards."""
    return _tables_of(pipeline, name)


def topic_prefix(pipeline: Pipeline) -> str:
    prefixes = {t.topic.rsplit(".", 2)[0] for t in pipeline.tables.values()}
    for name in pipeline.tables:  # every topic valid
        _topic_parts(pipeline, name)
    if len(prefixes) != 1:
        raise ConfigError(f"tables: every topic of one pipeline needs the same prefix (one Debezium connector); "
                          f"found {', '.join(sorted(prefixes))} ({pipeline.source_file})")
    return prefixes.pop()


def lake_name(column: str) -> str:
    """A column's name in the landed files and the lake: Debezium's field.name.adjustment.mode=avro puts
    "_" in place of every character Avro does not allow (a first character: letter or "_", a leading digit
    gets "_" before it; the others: letters, digits, "_")."""
    out = []
    for i, ch in enumerate(column):
        if ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z") or (i > 0 and "0" <= ch <= "9"):
            out.append(ch)
        else:
            out.append("_" + ch if "0" <= ch <= "9" else "_")  # a leading digit is kept: "1st" -> "_1st"
    return "".join(out)
