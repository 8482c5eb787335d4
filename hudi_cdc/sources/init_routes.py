"""`init --from-database` proposes routing (docs/shaping.md#routing) for tables whose names differ only by a
numeric suffix (``orders_2024_01``, ``orders_2024_02``) or whose schemas do (``tenant_17.orders``,
``tenant_18.orders``), with the same columns and key: a commented entry routing them into one lake table by a
pattern, below the tables' own entries. Commented, because whether shards are one table is the user's call;
uncommenting it (and removing the shards' own entries) is the whole change."""

from __future__ import annotations

import re
from collections import defaultdict

from hudi_cdc.sources.db_tables import DbTable
from hudi_cdc.sources.tables import lake_name

_SUFFIX = re.compile(r"^(.*?[A-Za-z])(_?\d+(?:_\d+)*)$")
_DIGITS = r"_?\d+(?:_\d+)*"


def _split(name: str) -> tuple[str, bool]:
    m = _SUFFIX.match(name)
    return (m.group(1), True) if m else (name, False)


def proposals(found: list[DbTable], prefix: str, taken: set[str], indent: str) -> tuple[str, list[str]]:
    """(the commented entries, one line per proposal) for the groups of two or more tables that differ only
    by a suffix of their table's or schema's name and share columns and key."""
    groups: dict[tuple, list[DbTable]] = defaultdict(list)
    for t in found:
        (schema, s_cut), (table, t_cut) = _split(t.schema), _split(t.table)
        if (s_cut or t_cut) and t.key:
            groups[(schema, s_cut, table, t_cut, tuple(t.columns), tuple(t.key))].append(t)
    text, lines = "", []
    i2, i3 = indent * 2, indent * 3
    for (schema, s_cut, table, t_cut, _, key), members in groups.items():
        if len(members) < 2:
            continue
        pattern = (re.escape(schema) + (_DIGITS if s_cut else "") + r"\." + re.escape(table)
                   + (_DIGITS if t_cut else ""))
        name = re.sub(r"[^A-Za-z0-9_]", "_", table)
        while name in taken:
            name += "_all"
        taken.add(name)
        keys = [lake_name(k) for k in key]
        shown = ", ".join(m.qualified for m in members[:3]) + (", ..." if len(members) > 3 else "")
        text += "\n".join([
            f"{indent}# route proposal: {shown} differ only by a suffix; to feed one lake table {name} from all of",
            f"{indent}# them (and from any created later), uncomment this and remove their entries above:",
            f"{indent}# {name}:",
            f"{i2}# topic: {prefix}.{schema}.{table}",
            f"{i2}# record_key: {keys[0] if len(keys) == 1 else '[' + ', '.join(keys) + ']'}",
            f"{i2}# route:",
            f"{i3}# pattern: '{pattern}'",
            f"{i3}# source_column: __source_table  # each row's <schema>.<table>; it joins the record key",
            f"{i2}# table_types: [COPY_ON_WRITE, MERGE_ON_READ]"]) + "\n"
        lines.append(f"{len(members)} tables ({shown}) differ only by a suffix: a commented route entry {name} "
                     "proposes them as one lake table")
    return text, lines
