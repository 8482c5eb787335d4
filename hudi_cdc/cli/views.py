"""Results of the library as `Output`s (hudi_cdc/cli/output.py): which columns people see, titles, the
JSON object scripts get. No computing here, no printing."""

from __future__ import annotations

import json
import shlex
from datetime import datetime, timezone
from typing import Any

from hudi_cdc.cli.output import Output, Section

COMMIT_COLUMNS = ["requested_time", "completion_time", "action", "operation", "records_written", "records_inserted",
                  "records_updated", "records_deleted", "files_added", "files_updated", "bytes_written",
                  "partitions_written"]
WA_COLUMNS = ["requested_time", "action", "records_upserted", "records_written", "write_amplification",
              "bytes_written"]
SIZE_COLUMNS = ["kind", "files", "total_bytes", "min", "p10", "p50", "avg", "p95", "max", "std_dev"]
FILE_COLUMNS = ["partition", "file_id", "base_instant", "base_bytes", "log_files", "log_bytes", "total_bytes"]


def shell_lines(argv: list[str]) -> list[str]:
    """For people: one flag and its value per line (the argv itself stays a list)."""
    lines, i = [], 0
    while i < len(argv):
        a = shlex.quote(argv[i])
        if argv[i].startswith("--") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            a += " " + shlex.quote(argv[i + 1])
            i += 1
        lines.append(a)
        i += 1
    return lines


def job_argvs(rows: list[dict[str, Any]]) -> Output:
    text: list[Any] = []
    for r in rows:
        text += [f"# {r['job']}", " \\\n  ".join(shell_lines(r["argv"]))]
    return Output(text=text, json=rows)


def job_results(results: list[dict[str, Any]]) -> Output:
    """bootstrap / stream: one row per table written (json: every field of every result)."""
    rows = [{"table": r.get("table"), "operation": r.get("operation"), "files": len(r.get("files") or []),
             "records_in": r.get("records_in"), "written": r.get("records_written"), "deletes": r.get("deletes"),
             "commit": r.get("commit") or ("-" if r.get("skipped") else None)}
            for r in results if not r.get("dry_run")]
    return Output(text=[Section(rows)] if rows else [], json=results)


def stream_all_results(results: list[dict[str, Any]]) -> Output:
    """stream --all (continuous): one row per table and type, how its loop ended (json: every field)."""
    if any(r.get("dry_run") for r in results):
        return job_results(results)
    rows = [{"table": r.get("table"), "state": r.get("state"), "rounds": r.get("rounds"), "commits": r.get("commits"),
             "written": r.get("records_written"), "failures": r.get("failures"), "last_error": r.get("last_error")}
            for r in results]
    return Output(text=[Section(rows)] if rows else [], json=results)


# ---- inspect ---------------------------------------------------------------------------------------
def commits(rows: list[dict[str, Any]]) -> Output:
    csv_columns = [c for c in rows[0] if c != "partitions"] if rows else None
    return Output(text=[Section(rows, COMMIT_COLUMNS, {"bytes_written"})], json=rows,
                  csv=Section(rows, csv_columns))


def stats(table: dict[str, Any], wa: list[dict[str, Any]], sizes: dict[str, dict[str, Any]]) -> Output:
    size_rows = [dict(kind=k, **v) for k, v in sizes.items()]
    return Output(
        text=["Write amplification (records written / records upserted; commit and replacecommit instants):",
              Section(wa, WA_COLUMNS, {"bytes_written"}),
              "File sizes (latest file slices):",
              Section(size_rows, SIZE_COLUMNS, set(SIZE_COLUMNS) - {"kind", "files"})],
        json={"table": table, "write_amplification": wa, "file_sizes": sizes}, csv=Section(wa))


def compactions(rows: list[dict[str, Any]]) -> Output:
    return Output(text=[Section(rows, None, {"log_bytes"}, empty="(no compactions in the active timeline)")],
                  json=rows, csv=Section(rows))


def file_slices(rows: list[dict[str, Any]]) -> Output:
    return Output(text=[Section(rows, FILE_COLUMNS, {"base_bytes", "log_bytes", "total_bytes"})], json=rows,
                  csv=Section(rows, FILE_COLUMNS))


def schema(info: dict[str, Any]) -> Output:
    t = info["table"]
    return Output(text=[f"{t['name']}: {t['type']}, table version {t['version']}, {t['path']}",
                        f"partition fields: {', '.join(t['partition_fields']) or '(none)'}",
                        Section(info["fields"]),
                        Section([{"property": k, "value": v} for k, v in info["config"].items()])],
                  json=info, csv=Section(info["fields"]))


def timeline(rows: list[dict[str, Any]]) -> Output:
    section = Section(rows, empty="(the timeline is empty)")
    return Output(text=[section], json=rows, csv=Section(rows))


# ---- query -----------------------------------------------------------------------------------------
def as_of(qt: Any, at: str, commit: Any, res: Any, read_optimized: bool) -> Output:
    view = " (read-optimized)" if read_optimized else ""
    note = (f"{qt.uri} as of {at}{view}: commit {commit.requested_time} ({commit.action}, completed "
            f"{res.committed_at}), {len(res.rows)} row(s), engine {res.engine}")
    return Output.rows(res.rows, notes=[note])


def history(qt: Any, key: str, res: Any) -> Output:
    notes = [f"warning: {w}" for w in res.warnings]
    notes.append(f"{qt.uri}: {len(res.states)} state(s) of key {key}, engine {res.engine}")
    return Output.rows(res.states, notes=notes)


def changes(qt: Any, res: Any) -> Output:
    after = res.range.after
    start = (f"commit {after.requested_time} (completed {qt.wall_clock(after.completion_time)})"
             if after else "the first commit")
    until, t = res.range.until, res.totals
    note = (f"{qt.uri}: {len(res.commits)} commit(s) after {start} up to commit {until.requested_time} "
            f"(completed {qt.wall_clock(until.completion_time)}); commit metadata: {t['inserts']} "
            f"insert(s), {t['updates']} update(s), {t['deletes']} delete(s); {len(res.rows)} row(s), "
            f"engine {res.engine}")
    text: list[Any] = []
    if res.commits:
        text = ["Commits (from their metadata):", Section(res.commits),
                "Records (latest version of each record upserted; deleted records are not listed):"]
    return Output(text=[*text, Section(res.rows)], json=res.rows, csv=Section(res.rows), notes=[note])


def consistent(res: Any) -> Output:
    """`query consistent`: the point, then one row per table and engine with its SQL."""
    when = datetime.fromtimestamp(res.ts_ms / 1000, tz=timezone.utc).isoformat(timespec="seconds") if res.ts_ms else "?"
    head = (f"consistent point ({res.table_type}): cut {res.cut} of {res.newest_cut}, LSN {res.lsn}, "
            f"source time {when}")
    rows = [{"table": t.table, "kind": t.kind, "engine": engine, "sql": sql}
            for t in res.tables for engine, sql in t.sql.items()]
    rows += [{"table": t.table, "kind": t.kind, "engine": "-", "sql": "(empty at this point)"}
             for t in res.tables if not t.sql]
    return Output(text=[head, Section(rows)], json=res.as_dict(), csv=Section(rows))


# ---- schemas ---------------------------------------------------------------------------------------
def subject(sv: Any, versions: list[int], url: str) -> Output:
    schema_ = sv.parsed
    fields = schema_.get("fields", []) if isinstance(schema_, dict) else []
    head = [f"subject {sv.subject}  version {sv.version} of {versions}  id {sv.id}", f"url     {url}"]
    rows = [{"field": f["name"], "type": f["type"] if isinstance(f["type"], str) else json.dumps(f["type"]),
             "default": json.dumps(f["default"]) if "default" in f else ""} for f in fields]
    body: Any = Section(rows) if fields else json.dumps(schema_, indent=2)
    return Output(text=[*head, body], csv=Section(rows) if fields else None,
                  json={"subject": sv.subject, "version": sv.version, "id": sv.id, "versions": versions,
                        "url": url, "schema": schema_})



