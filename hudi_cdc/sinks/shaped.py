"""A table's shaping (docs/shaping.md: columns, mask, filter, derive, types) in render-sql's statements, so
the Iceberg (Trino, Spark), Redshift and Athena targets hold the rows the Hudi table holds.

Each engine reads the landed (source) columns once, where events enter it (Trino's and Spark's stage,
Redshift's staged events, Athena's latest view), through one projection built here, as hudi-cdc's streamer
does it (jobs/stream/shape.py), in Spark SQL first and then transpiled by sqlglot to the engine's dialect:
- the filter folded into the delete field: a row the predicate is false or NULL for becomes a delete of
  its key (``CASE WHEN COALESCE((<filter>), FALSE) THEN __deleted ELSE 'true' END``), so an UPDATE that
  moves a row out deletes it from the target, one that moves it in inserts it, and a DELETE of a row the
  target never held changes nothing (the apply logic's own rule for deletes of absent keys); Athena's view
  keeps the rows whose latest change the filter holds for;
- derived columns ``CAST((<expr>) AS <types entry>)``; lake types ``CAST(col AS <type>)`` (Spark's CAST,
  which sqlglot writes as TRY_CAST where the engine's CAST raises instead of giving NULL);
- masks with ``mask_in: streamer`` (``capture``: Debezium masked the values before they landed, nothing
  to do): redact = '****' (NULL too); hash = Debezium's v2 SHA-256, in Spark SQL only, with the salt read
  by Spark's own variable substitution from the driver's environment (``'${env:<VAR>}'``), never in the
  text; Trino, Athena and Redshift have no such reference, so a hash there is refused;
- excluded (or not included) columns are not projected.

What an engine cannot give exactly is refused in one line naming the table and the shaping key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_cdc.common.shaping import REDACTED, Shape
from hudi_cdc.errors import ConfigError
from hudi_cdc.sinks.columns import Column

if TYPE_CHECKING:
    from hudi_cdc.config import Pipeline

ENGINE_NAMES = {"trino": "Trino", "spark": "Spark SQL", "redshift": "Redshift", "athena": "Athena"}
# (landed Avro type, lake type) CASTs whose result differs between Spark (the streamer) and Trino,
# Redshift or Athena: a fraction to an integer (Spark truncates, they round), a narrowing (Spark wraps),
# a fraction or timestamp to text (each engine writes its own digits and format), text to anything else
# (Spark trims, and takes '12.5' as an int and 'yes' as a boolean; they give NULL), bytes
_CAST_DIFFERS = {("float", "int"), ("float", "bigint"), ("double", "int"), ("double", "bigint"),
                 ("long", "int"), ("float", "string"), ("double", "string"), ("timestamp-millis", "string"),
                 ("timestamp-micros", "string"),
                 *(("string", t) for t in ("double", "float", "bigint", "int", "boolean", "date", "timestamp"))}


def _bq(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def salt_sql(env: str) -> str:
    """The salt as a Spark SQL expression: Spark substitutes ``${env:VAR}`` from the driver's environment
    before parsing; an unset or empty variable stops the statement (raise_error) rather than hash with
    the reference's own text."""
    ref = "'${env:" + env + "}'"
    unset = "concat('$', '{env:" + env + "}')"
    return (f"(CASE WHEN {ref} = {unset} OR {ref} = '' THEN raise_error('environment variable {env} "
            f"(source.mask_salt_env) is not set or empty') ELSE {ref} END)")


@dataclass(frozen=True)
class Shaping:
    """One shaped table for one engine: the landed columns, the target's, and the projection between."""

    table: str
    engine: str
    dialect: str
    shape: Shape
    source: list[Column]
    keys: list[str]
    delete_field: str

    def _where(self, key: str) -> str:
        return f"tables.{self.table}.{key}"

    def _user_expr(self, text: str, key: str, alias: str) -> str:
        """A pipeline-file expression with its columns qualified by ``alias``, as Spark SQL."""
        import sqlglot
        from sqlglot import exp

        tree = sqlglot.parse_one(text, read="spark")
        names = {c.name for c in self.source}
        for col in tree.find_all(exp.Column):
            if col.name not in names:
                raise ConfigError(f"{self._where(key)}: no column {col.name} in the landed schema")
        if self.engine != "spark":
            fn = tree.find(exp.Anonymous)
            if fn is not None:
                raise ConfigError(f"{self._where(key)}: {fn.name}() is not a function sqlglot knows, so its "
                                  f"{ENGINE_NAMES[self.engine]} form cannot be checked; use a standard function")

        def qualify(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Column) and not node.table:
                return exp.column(node.name, table=alias, quoted=True)
            return node

        return tree.transform(qualify).sql(dialect="spark")

    def _write(self, spark_sql: str, key: str) -> str:
        """Spark SQL -> the engine's dialect (sqlglot), refusing what it cannot carry over."""
        import sqlglot

        try:
            return sqlglot.transpile(spark_sql, read="spark", write=self.dialect, identify=True,
                                     unsupported_level=sqlglot.ErrorLevel.RAISE)[0]
        except sqlglot.errors.SqlglotError as exc:
            raise ConfigError(f"{self._where(key)}: has no {ENGINE_NAMES[self.engine]} form: "
                              f"{str(exc).splitlines()[0]}") from None

    def _kept(self) -> list[Column]:
        return [c for c in self.source if self.shape.keeps(c.name, self.keys)]

    @property
    def columns(self) -> list[Column]:
        """The target's columns: the kept landed ones (in their lake type), then the derived ones."""
        out = []
        for c in self._kept():
            streamer_mask = self.shape.mask_in == "streamer" and c.name in self.shape.mask
            lake = "string" if streamer_mask else self.shape.types.get(c.name)
            out.append(Column(c.name, c.avro, c.semantic, lake))
        return out + [Column(n, "string", None, self.shape.types[n]) for n in self.shape.derive]

    def _column_sql(self, c: Column, alias: str, fold_filter: bool) -> tuple[str, str]:
        """(Spark SQL of the target column ``c`` over the landed row ``alias``, the shaping key it comes from)."""
        s = self.shape
        col = f"{_bq(alias)}.{_bq(c.name)}"
        if c.name in s.derive:
            return f"CAST(({self._user_expr(s.derive[c.name], f'derive.{c.name}', alias)}) AS {c.lake})", \
                f"derive.{c.name}"
        if s.mask_in == "streamer" and s.mask.get(c.name) == "redact":
            return f"'{REDACTED}'", f"mask.{c.name}"
        if s.mask_in == "streamer" and s.mask.get(c.name) == "hash":
            assert s.salt_env  # config: a hash needs source.mask_salt_env
            return f"sha2(concat({salt_sql(s.salt_env)}, CAST({col} AS STRING)), 256)", f"mask.{c.name}"
        if c.name in s.types:
            return f"CAST({col} AS {s.types[c.name]})", f"types.{c.name}"
        if c.name == self.delete_field and fold_filter and s.filter is not None:
            keep = self._user_expr(s.filter, "filter", alias)
            return f"CASE WHEN COALESCE(({keep}), FALSE) THEN {col} ELSE 'true' END", "filter"
        return col, ""

    def project(self, alias: str, fold_filter: bool = True) -> str:
        """The SELECT list turning a landed row ``alias`` into a target row (module doc)."""
        items = []
        for c in self.columns:
            sql, key = self._column_sql(c, alias, fold_filter)
            written = self._write(sql, key or c.name)
            items.append(written if not key else f"{written} AS {self._write(_bq(c.name), c.name)}")
        return ", ".join(items)

    def keep(self, alias: str) -> str | None:
        """The filter as a condition on the landed row ``alias`` (None: no filter)."""
        if self.shape.filter is None:
            return None
        return self._write(f"COALESCE(({self._user_expr(self.shape.filter, 'filter', alias)}), FALSE)", "filter")

    def check(self) -> None:
        """Refuse, in one line naming the table and key, what this engine would render differently."""
        s, engine = self.shape, ENGINE_NAMES[self.engine]
        by_name = {c.name: c for c in self.source}
        if s.filter is not None and self.delete_field not in by_name:
            raise ConfigError(f"{self._where('filter')}: the landed events have no {self.delete_field} field "
                              "to mark rows leaving the filter as deletes")
        if self.delete_field in s.types:
            raise ConfigError(f"{self._where('types.' + self.delete_field)}: the apply logic reads the delete "
                              "field as Debezium writes it ('true'/'false'); not rendered with another type")
        for name in s.derive:
            if name not in s.types:
                raise ConfigError(f"{self._where('derive.' + name)}: render-sql needs its lake type for the "
                                  f"target's DDL; add types.{name} (e.g. string)")
        if s.mask_in == "streamer" and self.engine != "spark" and s.hashed:
            raise ConfigError(f"{self._where('mask.' + s.hashed[0])}: {engine} SQL would need the hash salt in "
                              "its text; mask in capture (mask_in: capture, the default) or use --engine spark")
        read = {f"types.{c}": [c] for c in s.types if c not in s.derive}
        read.update({f"derive.{n}": _columns(e) for n, e in s.derive.items()})
        if s.filter is not None:
            read["filter"] = _columns(s.filter)
        for key, cols in read.items():
            for col in cols:
                c = by_name.get(col)
                if c is None:
                    raise ConfigError(f"{self._where(key)}: no column {col} in the landed schema")
                if c.semantic and c.semantic.startswith(("io.debezium.", "org.apache.kafka.connect.")):
                    raise ConfigError(f"{self._where(key)}: {col} lands as {c.semantic}, which render-sql keeps "
                                      f"as its Avro {c.avro} where hudi-cdc's streamer types it (docs/types.md)")
        if self.engine != "spark":
            for col, lake in s.types.items():
                c = by_name.get(col)
                text_to = c is not None and c.avro == "string" and lake.startswith("decimal")
                if c is not None and ((c.avro, lake) in _CAST_DIFFERS or c.avro == "bytes" or text_to):
                    raise ConfigError(f"{self._where('types.' + col)}: {engine} casts a {c.avro} to {lake} "
                                      "differently from Spark (the Hudi table's); not rendered")
        for name, text in [*s.derive.items(), ("filter", s.filter or "")]:
            if text:
                key = "filter" if name == "filter" else f"derive.{name}"
                self._write(self._user_expr(text, key, "c"), key)  # parses and transpiles, or one line


def _columns(text: str) -> list[str]:
    from hudi_cdc.config.shape import parse_expression

    return parse_expression(text, "expression")


def shaping_for(pipeline: Pipeline, table: str, engine: str, dialect: str, source: list[Column],
                seed: bool) -> Shaping | None:
    """The table's shaping for an engine, checked (None: the table is not shaped)."""
    settings = pipeline.table(table)
    if settings.route is not None:
        raise ConfigError(f"tables.{table}.route: render-sql reads one topic per table; a routed table (several "
                          "source tables) is applied by hudi-cdc's streamer only")
    shape = pipeline.shape(table)
    if shape.empty:
        return None
    if seed:
        raise ConfigError(f"tables.{table}: --seed renders the seed recipes' own statements, which apply no "
                          "shaping (columns/mask/filter/derive/types); render without --seed")
    out = Shaping(table, engine, dialect, shape, source, list(settings.record_keys), settings.delete_field)
    out.check()
    return out
