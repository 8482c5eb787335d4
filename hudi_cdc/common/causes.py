"""One line out of an exception or a log: the first line of a message, the root cause of a JVM
stack trace, the error lines of a tool's output.

Standard library only: the local streamer job (hudi_cdc/jobs/) imports it in the Spark driver.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from re import Pattern

# "org.apache.hudi.exception.HoodieException: ..." or "ValueError: ..." anywhere in a line
_EXCEPTION_LINE = re.compile(r"(\w+(?:\.\w+)*(?:Exception|Error): .*)")
CAUSED_BY = "Caused by:"


def _lines(source: BaseException | str | Iterable[str]) -> list:
    text = str(source) if isinstance(source, (BaseException, str)) else "\n".join(source)
    return [line.strip() for line in text.splitlines() if line.strip()]


def first_line(exc: BaseException | str, limit: int | None = None) -> str:
    """The first non-empty line of a message; the exception's type name when it has none."""
    lines = _lines(exc)
    text = lines[0] if lines else (type(exc).__name__ if isinstance(exc, BaseException) else "")
    return text[:limit] if limit else text


def root_cause(source: BaseException | str | Iterable[str], limit: int = 500) -> str:
    """The deepest 'Caused by' of a JVM stack trace (py4j error text or a Spark log), else the last
    exception line, else the first line. A message of one line is its own root cause."""
    lines = _lines(source)
    if len(lines) == 1:
        return lines[0][:limit]
    caused = [line[len(CAUSED_BY):].strip() for line in lines if line.startswith(CAUSED_BY)]
    if caused:
        return caused[-1][:limit]
    found = [m.group(1) for line in lines for m in [_EXCEPTION_LINE.search(line)] if m]
    if found:
        return found[-1][:limit]
    if lines:
        return lines[0][:limit]
    return type(source).__name__ if isinstance(source, BaseException) else "no output"


def error_lines(output: str | Iterable[str], pattern: Pattern[str], keep: int = 4,
                empty: str = "(no output)") -> str:
    """The last `keep` lines of a tool's output that match `pattern` (else its last lines), stack
    frames left out, joined with ' | ' into one line."""
    lines = [line for line in _lines(output) if not line.startswith("at ")]
    picked = [line for line in lines if pattern.search(line)] or lines
    return " | ".join(line[:300] for line in picked[-keep:]) or empty
