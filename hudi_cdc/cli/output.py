"""Text for people, JSON for scripts: every command that prints results goes through here.

A command builds an `Output` (what to print per format) and calls `render(out, fmt)`: progress notes
go to stderr, the chosen format to stdout. `emit` prints plain rows or any JSON-able object.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import click

from hudi_cdc.common.text import human_bytes, text_table

__all__ = ["human_bytes", "text_table"]  # re-exported: commands print with them


def to_csv(rows: Sequence[Mapping[str, Any]], columns: list[str] | None = None) -> str:
    buf = io.StringIO()
    cols = columns or (list(rows[0].keys()) if rows else [])
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c) for c in cols})
    return buf.getvalue().rstrip("\n")


@dataclass
class Section:
    """Rows shown as one table. In text, `byte_columns` are shown as 1.2 MB and no rows as `empty`."""

    rows: Sequence[Mapping[str, Any]]
    columns: list[str] | None = None
    byte_columns: Collection[str] = ()
    empty: str | None = None

    def text(self) -> str:
        if not self.rows and self.empty is not None:
            return self.empty
        if not self.byte_columns:
            return text_table(self.rows, self.columns)
        cols = self.columns or (list(self.rows[0]) if self.rows else [])
        return text_table([{c: human_bytes(r.get(c)) if c in self.byte_columns else r.get(c) for c in cols}
                           for r in self.rows])

    def csv(self) -> str:
        return to_csv(self.rows, self.columns)


@dataclass
class Output:
    """What one command prints. `text`: sections and plain lines in order; `json`: the object for
    -o json; `csv`: the section for -o csv (None: csv shows the text). `notes` go to stderr first."""

    text: list[Section | str] = field(default_factory=list)
    json: Any = None
    csv: Section | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def rows(cls, rows: Sequence[Mapping[str, Any]], columns: list[str] | None = None, **kw: Any) -> Output:
        """The common case: one table of rows (all fields in json, `columns` in text and csv)."""
        section = Section(rows, columns)
        return cls(text=[section], json=rows, csv=section, **kw)


def render(out: Output, fmt: str = "text") -> None:
    for note in out.notes:
        progress(note)
    if fmt == "json" and out.json is not None:
        click.echo(json.dumps(out.json, indent=2, default=str))
    elif fmt == "csv" and out.csv is not None:
        click.echo(out.csv.csv())
    else:
        for part in out.text:
            click.echo(part.text() if isinstance(part, Section) else part)


def emit(rows: Any, fmt: str = "text", columns: list[str] | None = None) -> None:
    """Print rows (a list of dicts) or any JSON-able object in the chosen format."""
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2, default=str))
    elif fmt == "csv":
        click.echo(to_csv(list(rows), columns))
    elif isinstance(rows, list):
        click.echo(text_table(rows, columns))
    else:
        click.echo(rows)


def progress(msg: str) -> None:
    """Progress for people goes to stderr, so stdout stays clean for --output json."""
    click.echo(msg, err=True)


output_option = click.option(
    "--output", "-o", "output", type=click.Choice(["text", "json", "csv"]), default="text", show_default=True,
    help="text table for people, json/csv for scripts",
)
