"""The sink interface, the per-table context the SQL templates see, and the template loader.

Templates: templates/sql/<engine>/statements.sql.j2 (hudi-cdc's apply logic) and seed.sql.j2
(the seed recipe's own statements), Jinja2 with StrictUndefined. A template holds several
statements, each opened by a line ``-- statement: <ddl|apply> <name>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol

import jinja2

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError, DataError
from hudi_cdc.sinks.columns import Column, columns_of
from hudi_cdc.sinks.shaped import Shaping, shaping_for

ENGINES = ("trino", "spark", "redshift", "athena")
DIALECTS = {"trino": "trino", "spark": "spark", "redshift": "redshift", "athena": "athena"}
TIE_BREAK_FIELD = "__source_ts_ms"  # after the ordering fields, before the landed file
_MARK = re.compile(r"^-- statement: (ddl|apply) ([A-Za-z0-9_]+)\s*$", re.M)


@dataclass(frozen=True)
class Statement:
    table: str
    kind: str  # ddl | apply
    name: str
    dialect: str
    sql: str  # without the closing semicolon

    def text(self) -> str:
        return f"-- {self.table}: {self.kind} {self.name}\n{self.sql};\n"


class Sink(Protocol):
    @property
    def engine(self) -> str: ...

    def render(self, pipeline: Pipeline, table: str) -> list[Statement]: ...


Quote = Callable[[str], str]


def _dq(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _bq(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


QUOTES: dict[str, Quote] = {"trino": _dq, "athena": _dq, "redshift": _dq, "postgres": _dq, "spark": _bq}


@dataclass
class TableContext:
    """What every template gets for one table: names, columns and the apply logic's expressions."""

    pipeline: Pipeline
    table: str
    dialect: str
    columns: list[Column]  # the target's (shaped) columns
    q: Quote = field(repr=False)
    source_columns: list[Column] = field(default_factory=list)  # the landed ones (the same when not shaped)
    shaping: Shaping | None = None

    @property
    def shaped(self) -> bool:
        return self.shaping is not None

    def project(self, alias: str, fold_filter: bool = True) -> str:
        """The SELECT list from a landed row to a target row (sinks/shaped.py); only for a shaped table."""
        assert self.shaping is not None
        return self.shaping.project(alias, fold_filter)

    def keep(self, alias: str) -> str | None:
        return self.shaping.keep(alias) if self.shaping is not None else None

    @property
    def settings(self):
        return self.pipeline.table(self.table)

    @property
    def keys(self) -> list[str]:
        return self.settings.record_keys

    @property
    def ordering(self) -> list[str]:
        return self.settings.ordering_fields

    @property
    def tie_break(self) -> list[str]:
        names = {c.name for c in self.columns}
        return [TIE_BREAK_FIELD] if TIE_BREAK_FIELD in names and TIE_BREAK_FIELD not in self.ordering else []

    @property
    def soft_deletes(self) -> bool:
        return self.settings.deletes == "soft"

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def data_columns(self) -> list[Column]:
        """The source row's own columns: neither the key nor Debezium's added __ fields."""
        return [c for c in self.columns if c.name not in self.keys and not c.name.startswith("__")]

    def qlist(self, names: list[str]) -> str:
        return ", ".join(self.q(n) for n in names)

    def newer(self, left: str, right: str, right_prefix: str = "") -> str:
        """SQL: the ordering value of alias `left` is strictly newer than `right`'s (lexicographic)."""
        expr = ""
        for o in reversed(self.ordering):
            lc, rc = f"{left}.{self.q(o)}", f"{right}.{self.q(right_prefix + o)}"
            expr = f"{lc} > {rc}" if not expr else f"({lc} > {rc} OR ({lc} = {rc} AND {expr}))"
        return expr

    def is_delete(self, alias: str) -> str:
        d = f"{alias}.{self.q(self.settings.delete_field)}"
        if any(c.name == "__op" for c in self.columns):
            return f"(COALESCE({d}, 'false') = 'true' OR COALESCE({alias}.{self.q('__op')}, '') = 'd')"
        return f"COALESCE({d}, 'false') = 'true'"

    def key_match(self, left: str, right: str) -> str:
        return " AND ".join(f"{left}.{self.q(k)} = {right}.{self.q(k)}" for k in self.keys)

    def rank_order(self, position: list[str]) -> str:
        """ORDER BY of the latest-change window: ordering fields, the tie-break field, the position."""
        return ", ".join([f"{self.q(c)} DESC" for c in self.ordering + self.tie_break] +
                         [f"{p} DESC" for p in position])


def schema_of(pipeline: Pipeline, table: str) -> dict[str, Any]:
    from hudi_cdc.registry.schemas import schema_from_landed

    return schema_from_landed(pipeline, table)


def _env() -> jinja2.Environment:
    root = resources.files("hudi_cdc.templates") / "sql"
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(root)), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, autoescape=False, trim_blocks=True, lstrip_blocks=True)


_ENV: jinja2.Environment | None = None


def split_statements(text: str, table: str, dialect: str) -> list[Statement]:
    marks = list(_MARK.finditer(text))
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        sql = text[m.end():end].strip().rstrip(";").strip()
        out.append(Statement(table, m.group(1), m.group(2), dialect, sql))
    return out


def render_template(engine: str, template: str, ctx: TableContext, **extra: Any) -> list[Statement]:
    global _ENV
    if _ENV is None:
        _ENV = _env()
    try:
        text = _ENV.get_template(f"{engine}/{template}").render(t=ctx, q=ctx.q, p=ctx.pipeline, **extra)
    except jinja2.UndefinedError as exc:
        raise ConfigError(f"template sql/{engine}/{template}: {exc.message}") from None
    return split_statements(text, ctx.table, ctx.dialect)


@dataclass(frozen=True)
class TemplateSink:
    """A sink whose statements come from templates/sql/<engine>/."""

    engine: str
    seed: bool = False
    schema: dict[str, Any] | None = None  # default: the newest landed file's writer schema

    def context(self, pipeline: Pipeline, table: str) -> TableContext:
        pipeline.table(table)  # unknown table -> ConfigError
        try:
            cols = columns_of(self.schema if self.schema is not None else schema_of(pipeline, table))
        except ValueError as exc:
            raise DataError(f"table {table}: {exc}") from None
        dialect = DIALECTS[self.engine]
        shaping = shaping_for(pipeline, table, self.engine, dialect, cols, self.seed)
        return TableContext(pipeline, table, dialect, shaping.columns if shaping else cols, QUOTES[dialect], cols,
                            shaping)

    def render(self, pipeline: Pipeline, table: str) -> list[Statement]:
        ctx = self.context(pipeline, table)
        return render_template(self.engine, "seed.sql.j2" if self.seed else "statements.sql.j2", ctx)


def sink_for(engine: str, seed: bool = False, schema: dict[str, Any] | None = None) -> Sink:
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}; engines: {', '.join(ENGINES)}")
    return TemplateSink(engine, seed, schema)


def render_sql(pipeline: Pipeline, engine: str, table: str | None = None, seed: bool = False,
               schema: dict[str, Any] | None = None) -> list[Statement]:
    """Every table's (or one table's) DDL and apply statements for an engine, in run order."""
    sink = sink_for(engine, seed, schema)
    names = [table] if table else list(pipeline.tables)
    return [s for name in names for s in sink.render(pipeline, name)]
