"""PostgreSQL's text of an array, as verify reads a refused value back from ``__rejects`` (typed_values.py)."""

from __future__ import annotations


def array_elements(text: str) -> list[str | None]:
    """PostgreSQL's text of a one-dimensional array of numbers ('{1.5,NULL,2}')."""
    inner = text.strip()[1:-1]
    return [None if e == "NULL" else e for e in inner.split(",")] if inner else []


def parse_array(text: str) -> list:
    """PostgreSQL's text of an array of any dimensions (``[2:3][1:1]={{1},{2}}``, ``{{"a,b",NULL},{c,d}}``) as
    nested lists of element texts (None for NULL); the bounds are left out, as psycopg leaves them out."""
    s = text.strip()
    if s.startswith("["):
        s = s[s.index("=") + 1:]
    pos = 0

    def level() -> list:
        nonlocal pos
        assert s[pos] == "{", text
        pos += 1
        out: list = []
        while s[pos] != "}":
            if s[pos] == "{":
                out.append(level())
            elif s[pos] == '"':
                pos += 1
                chars = []
                while s[pos] != '"':
                    if s[pos] == "\\":
                        pos += 1
                    chars.append(s[pos])
                    pos += 1
                pos += 1
                out.append("".join(chars))
            else:
                end = pos
                while s[end] not in ",}":
                    end += 1
                word = s[pos:end].strip()
                out.append(None if word.upper() == "NULL" else word)
                pos = end
            if s[pos] == ",":
                pos += 1
        pos += 1
        return out

    return level()
