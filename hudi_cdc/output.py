"""Text for people, JSON for scripts: every command that prints results goes through here."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, List, Mapping, Optional, Sequence

import click


def _cell(v: Any) -> str:
    if v is None:
        return "null"
    return str(v)


def text_table(rows: Sequence[Mapping[str, Any]], columns: Optional[List[str]] = None) -> str:
    if not rows:
        return "(no rows)"
    cols = columns or list(rows[0].keys())
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [line, "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |", line]
    for row in cells:
        out.append("| " + " | ".join(v.ljust(w) for v, w in zip(row, widths)) + " |")
    out.append(line)
    return "\n".join(out)


def to_csv(rows: Sequence[Mapping[str, Any]], columns: Optional[List[str]] = None) -> str:
    buf = io.StringIO()
    cols = columns or (list(rows[0].keys()) if rows else [])
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c) for c in cols})
    return buf.getvalue().rstrip("\n")


def emit(rows: Any, fmt: str = "text", columns: Optional[List[str]] = None) -> None:
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
