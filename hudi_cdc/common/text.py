"""Plain-text helpers for people (tables, byte counts, progress lines): the CLI's output, the demos, the
report and `source check` use them, so they live below the CLI (stdlib only).

Library calls never print: a call that reports progress takes a ``progress`` callback whose default,
``log_progress``, writes to the ``hudi_cdc`` logger (silent unless the caller configures logging); the CLI
passes its own printer (stderr), so only the CLI decides what reaches the terminal."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Progress = Callable[[str], None]
_LOG = logging.getLogger("hudi_cdc")


def log_progress(msg: str) -> None:
    """The default ``progress`` of library calls: one INFO record on the ``hudi_cdc`` logger."""
    _LOG.info(msg)


def _cell(v: Any) -> str:
    if v is None:
        return "null"
    return str(v)


def text_table(rows: Sequence[Mapping[str, Any]], columns: list[str] | None = None) -> str:
    if not rows:
        return "(no rows)"
    cols = columns or list(rows[0].keys())
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [line, "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)) + " |", line]
    for row in cells:
        out.append("| " + " | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) + " |")
    out.append(line)
    return "\n".join(out)


def human_bytes(n: Any) -> str:
    """Like Hudi's NumericUtils.humanReadableByteCount: 1024-based, one decimal."""
    if n is None:
        return "null"
    n = float(n)
    if n < 1024:
        return f"{int(n)} B" if n == int(n) else f"{n:.1f} B"
    for unit in "KMGTPE":
        n /= 1024
        if n < 1024 or unit == "E":
            return f"{n:.1f} {unit}B"
    return str(n)
