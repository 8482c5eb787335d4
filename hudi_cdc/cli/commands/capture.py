"""capture, verify, source check, connectors render: the source database side of a pipeline (thin)."""

from __future__ import annotations

import click

from hudi_cdc.cli.commands import pipeline_from
from hudi_cdc.cli.output import emit, output_option, progress

TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


@click.group("capture", invoke_without_command=True)
@click.option("--once", is_flag=True,
              help="snapshot if none yet, then every change committed so far, then exit "
                   "(without it: continuous, until SIGTERM or Ctrl-C)")
@click.option("--table", default=None,
              help="only this table, on a slot, publication and offsets of its own (<slot>_<table>)")
@click.option("--drop-slot", is_flag=True,
              help="drop the replication slot and publication capture created, and its offsets; then exit")
@click.option("--flush-size", type=click.IntRange(min=1), default=None,
              help="records per landed file (default: source.database.flush_size)")
@click.option("--rotate-seconds", type=click.FloatRange(min=0.5), default=60.0, show_default=True,
              help="continuous: close a file open this long (the sink's rotate.schedule.interval.ms)")
@click.option("--timeout", "timeout", type=float, default=None, help="--once: give up after this many seconds")
@output_option
@click.pass_context
def capture_cmd(ctx, once, table, drop_slot, flush_size, rotate_seconds, timeout, output):
    """Land the database's changes as Kafka Connect S3-sink Avro files under source.root (Debezium).
    `capture snapshot --table T`: an incremental snapshot of T on the pipeline's slot."""
    from hudi_cdc.capture import capture as cap

    if ctx.invoked_subcommand is not None:
        if once or table or drop_slot:
            raise click.UsageError(f"capture {ctx.invoked_subcommand}: give its options after it")
        return
    if once and drop_slot:
        raise click.UsageError("give one of --once or --drop-slot")
    pipeline = pipeline_from(ctx)
    if table is not None:
        pipeline = cap.for_table(pipeline, table)
    if drop_slot:
        dropped = cap.drop_slot(pipeline, progress)
        if output == "json":
            emit(dropped, "json")
        return
    if once:
        result = cap.capture_once(pipeline, progress=progress, flush_size=flush_size, timeout_seconds=timeout)
    else:
        with cap.stop_on_signals(progress) as stop:
            result = cap.capture_continuous(pipeline, stop, progress=progress, flush_size=flush_size,
                                            rotate_seconds=rotate_seconds)
    if output == "json":
        emit(result.to_dict(), "json")
    else:
        progress(f"captured {result.events} events into {result.files} file(s) in {result.seconds} s "
                 f"({result.events_per_second} events/s)")


@capture_cmd.command("snapshot")
@click.option("--table", default=None, help="the table to snapshot (in the pipeline file: add it there first)")
@click.option("--replace", is_flag=True,
              help="re-take a suspect lake copy: the lake table is truncated as of the snapshot's start, so rows "
                   "the database no longer has go too")
@click.option("--status", "show_status", is_flag=True, help="show the requested and running snapshots; change nothing")
@output_option
@click.pass_context
def capture_snapshot_cmd(ctx, table, replace, show_status, output):
    """Ask the capture on the pipeline's slot (running, else the next) for an incremental snapshot of a
    table, while streaming goes on (Debezium's execute-snapshot signal; no second slot); a PostgreSQL
    partitioned table gets a blocking one (streaming pauses while it is read)."""
    from hudi_cdc.capture import snapshot_requests

    pipeline = pipeline_from(ctx.find_root())
    if show_status:
        emit(snapshot_requests.snapshot_status(pipeline), output, ["table", "state", "rows", "replace", "floor_lsn"])
        return
    if table is None:
        raise click.UsageError("give --table (or --status)")
    result = snapshot_requests.request_snapshot(pipeline, table, replace, progress)
    if output == "json":
        emit(result, "json")


@click.command("verify")
@click.option("--table", default=None, help="the table to compare with its source table")
@click.option("--all", "every", is_flag=True, help="every table of the pipeline (of --type), one line each; one "
              "table's error does not stop the others")
@click.option("--type", "ttype", type=click.Choice(sorted(TYPES)), default="cow", show_default=True)
@click.option("--wait", "wait_seconds", type=click.FloatRange(min=0), default=0, show_default=True,
              help="compare again every --poll seconds until equal, for up to this many seconds (while a "
                   "capture and a stream are catching up)")
@click.option("--poll", "poll_seconds", type=click.FloatRange(min=0.1), default=5, show_default=True)
@click.option("--history", is_flag=True, help="the table's history table: its current versions (history: scd2)")
@click.option("--whole", is_flag=True,
              help="with --history: also the whole history table against the replay of every landed event of the "
                   "table (each version's values, range, current flag and operation)")
@output_option
@click.pass_context
def verify_cmd(ctx, table, every, ttype, wait_seconds, poll_seconds, history, whole, output):
    """Compare a Hudi table with its database table by keys and row hashes; exit 10 when they differ."""
    from functools import partial

    from hudi_cdc.sources.verify import TablesDiffer, verify, verify_until_equal, verify_whole

    if whole and not history:
        raise click.UsageError("--whole checks a history table: give --history too")
    if bool(table) == every:
        raise click.UsageError("give --table T or --all")
    pipeline = pipeline_from(ctx)
    if every:
        if whole:
            raise click.UsageError("--whole checks one history table: give --table")
        return _verify_every(pipeline, TYPES[ttype], wait_seconds, poll_seconds, history, output)
    result = verify_until_equal(pipeline, table, TYPES[ttype], wait_seconds, poll_seconds,
                                progress=lambda m: click.echo(m, err=True), compare=partial(verify, history=history))
    replayed = verify_whole(pipeline, table, TYPES[ttype]) if whole else None
    differing = [r for r in (result, replayed) if r is not None and not r.equal]
    if output == "json":
        emit(result.to_dict() if replayed is None else {"current": result.to_dict(), "whole": replayed.to_dict()},
             "json")
    else:
        for r in (result, replayed):
            if r is not None and not (differing and r is differing[0]):  # that one is the error's line
                click.echo(r.summary())
            for line in r.details if r is not None else ():
                click.echo(f"  {line}")
    if differing:
        raise TablesDiffer(differing[0].summary())


def _verify_every(pipeline, table_type: str, wait_seconds: float, poll_seconds: float, history: bool,
                  output: str) -> None:
    from hudi_cdc.errors import TablesFailed
    from hudi_cdc.sources.verify import TablesDiffer, verify_every

    results, failed = verify_every(pipeline, table_type, wait_seconds, poll_seconds,
                                   progress=lambda m: click.echo(m, err=True), history=history)
    if output == "json":
        emit([r.to_dict() for r in results] + [{"table": t, "table_type": tt, "error": str(e)} for t, tt, e in failed],
             "json")
    else:
        for r in results:
            click.echo(r.summary())
    if failed:
        raise TablesFailed("verify", failed, [r.to_dict() for r in results], len(results) + len(failed))
    differing = [r for r in results if not r.equal]
    if differing:
        raise TablesDiffer(f"{len(differing)} of {len(results)} table(s) differ: "
                           + "; ".join(r.summary() for r in differing))


@click.group("source")
def source():
    """The source database of the pipeline (source.database)."""


@source.command("check")
@click.option("--table", default=None, help="only this table's checks (default: every table)")
@output_option
@click.pass_context
def source_check_cmd(ctx, table, output):
    """Is the database ready for capture? Each failing check prints its fix; exit 11 on any failure."""
    from hudi_cdc.cli.output import Output, Section, render
    from hudi_cdc.errors import SourceError
    from hudi_cdc.sources import source_check

    checks = source_check(pipeline_from(ctx), table)
    failed = [c.name for c in checks if c.status == "fail"]
    rows = [c.to_dict() for c in checks]
    fixes = [f"{c.status} {c.name}: {c.fix}" for c in checks if c.fix and c.status != "ok"]
    render(Output(text=[Section(rows, ["name", "status", "detail"]), *(["fixes:"] + fixes if fixes else [])],
                  json={"ok": not failed, "checks": rows}, csv=Section(rows)), output)
    if failed:
        raise SourceError(f"source check: {len(failed)} check(s) failed: {', '.join(failed)}")


@click.group("connectors")
def connectors():
    """The pipeline's Kafka Connect connectors (Debezium PostgreSQL or MySQL/MariaDB source, S3 sink): render, or run
    them on a Kafka Connect cluster (source.connect.url or --connect-url)."""


@connectors.command("render")
@click.option("--seed", is_flag=True, help="the seed's own connector instead (to diff against): seed 001's "
              "two JSON files; a mysql/mariadb source: seed 004's MSK Connect MySQL connector")
@click.option("--table", default=None,
              help="that table alone, on its own slot and publication (as capture --table)")
@click.option("--out", "out", default=None, type=click.Path(file_okay=False),
              help="write <name>.json (the PUT /connectors/<name>/config body) per connector here")
@click.pass_context
def connectors_render_cmd(ctx, seed, table, out):
    """Print [{name, config}, ...] (POST /connectors bodies), or write one config file per connector."""
    import json
    from pathlib import Path

    from hudi_cdc.connect.connectors import ENV_PROVIDER, render_connectors

    if seed and table:
        raise click.UsageError("give one of --seed or --table")
    pipeline = pipeline_from(ctx)
    rendered = render_connectors(pipeline, seed=seed, table=table)
    if not seed:
        from hudi_cdc.connect.connectors import notes

        for note in notes(pipeline):
            progress(note)
    if any("${env:" in str(c["config"].get("database.password", "")) for c in rendered):
        progress("the password is a reference: the Connect worker needs "
                 + ", ".join(f"{k}={v}" for k, v in ENV_PROVIDER.items()) + " and the variable set")
    if out is None:
        emit(rendered, "json")
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    for c in rendered:
        path = Path(out) / f"{c['name']}.json"
        path.write_text(json.dumps(c["config"], indent=2) + "\n")
        click.echo(str(path))


# ---------------------------------------------------------------- against a Kafka Connect cluster
_connect_url = click.option("--connect-url", "connect_url", default=None, metavar="URL",
                            help="a Kafka Connect worker's REST URL (default: source.connect.url)")
_table = click.option("--table", default=None,
                      help="that table alone, on its own slot and publication (as capture --table)")
_only = click.option("--only", type=click.Choice(["source", "sink"]), default=None,
                     help="only the source (Debezium) or the sink (S3) connector (default: both)")


def _connectors(ctx, table, only, connect_url):
    from hudi_cdc.connect.client import ConnectClient
    from hudi_cdc.connect.connectors import chosen

    pipeline = pipeline_from(ctx)
    return chosen(pipeline, only, table), ConnectClient.from_pipeline(pipeline, connect_url)


@connectors.command("deploy")
@_table
@_only
@_connect_url
@click.option("--dry-run", is_flag=True, help="say what would change (create / update / unchanged), change nothing")
@output_option
@click.pass_context
def connectors_deploy_cmd(ctx, table, only, connect_url, dry_run, output):
    """PUT each connector's config (creates or updates; an unchanged config is left alone)."""
    from hudi_cdc.connect.connectors import ENV_PROVIDER

    rendered, client = _connectors(ctx, table, only, connect_url)
    rows = []
    with client:
        for c in rendered:
            current = client.config(c["name"])
            want = {k: str(v) for k, v in c["config"].items()}
            if current is None:
                action = "create"
            else:
                have = {k: v for k, v in current.items() if k != "name"}
                action = "unchanged" if have == want else "update"
            changed = sorted(k for k in set(want) | set(current or {}) - {"name"}
                             if (current or {}).get(k) != want.get(k)) if action == "update" else []
            if not dry_run and action != "unchanged":
                client.put_config(c["name"], want)
                action = "created" if action == "create" else "updated"
            rows.append({"connector": c["name"], "action": action, "changed_keys": ",".join(changed),
                         "url": client.url})
    if any("${env:" in str(c["config"].get("database.password", "")) for c in rendered):
        progress("the password is a reference: the workers need "
                 + ", ".join(f"{k}={v}" for k, v in ENV_PROVIDER.items()) + " and the variable set")
    emit(rows, output, ["connector", "action", "changed_keys", "url"])


@connectors.command("status")
@_table
@_only
@_connect_url
@output_option
@click.pass_context
def connectors_status_cmd(ctx, table, only, connect_url, output):
    """Each connector's and task's state; a FAILED one prints its trace's first line, exit 11."""
    from hudi_cdc.connect.client import ConnectorFailed

    rendered, client = _connectors(ctx, table, only, connect_url)
    with client:
        statuses = [client.status(c["name"]) for c in rendered]
    if output == "json":
        emit([s.to_dict() for s in statuses], "json")
    else:
        rows = [{"connector": s.name, "state": s.state, "worker": s.worker_id,
                 "tasks": " ".join(f"{t.id}:{t.state}" for t in s.tasks)} for s in statuses]
        emit(rows, output, ["connector", "state", "worker", "tasks"])
    failures = [s.failure() for s in statuses if s.failed]
    if failures:
        raise ConnectorFailed("; ".join(failures))


@connectors.command("restart")
@_table
@_only
@_connect_url
@click.option("--failed-only", is_flag=True, help="restart only the FAILED connector/tasks (onlyFailed=true)")
@click.pass_context
def connectors_restart_cmd(ctx, table, only, connect_url, failed_only):
    """Restart each connector with its tasks (POST .../restart?includeTasks=true)."""
    rendered, client = _connectors(ctx, table, only, connect_url)
    with client:
        for c in rendered:
            click.echo(f"{c['name']}: {client.restart(c['name'], include_tasks=True, only_failed=failed_only)}")


@connectors.command("delete")
@_table
@_only
@_connect_url
@click.pass_context
def connectors_delete_cmd(ctx, table, only, connect_url):
    """Delete each connector from the cluster (its offsets and the replication slot stay)."""
    rendered, client = _connectors(ctx, table, only, connect_url)
    with client:
        for c in rendered:
            click.echo(f"{c['name']}: {'deleted' if client.delete(c['name']) else 'not deployed'}")


@connectors.command("validate")
@_table
@_only
@_connect_url
@output_option
@click.pass_context
def connectors_validate_cmd(ctx, table, only, connect_url, output):
    """Ask the cluster to validate each config (its plugin checks, e.g. Debezium connects to the
    database); every error by config key, exit 2 on any."""
    from hudi_cdc.errors import ConfigError

    rendered, client = _connectors(ctx, table, only, connect_url)
    rows = []
    with client:
        for c in rendered:
            errors = client.validate(c["config"], name=c["name"])
            rows += [{"connector": c["name"], "key": e.key, "error": e.message} for e in errors]
            if not errors:
                rows.append({"connector": c["name"], "key": "", "error": ""})
    bad = [r for r in rows if r["key"]]
    if output == "json":
        emit({"ok": not bad, "errors": bad, "connectors": [c["name"] for c in rendered]}, "json")
    else:
        for c in rendered:
            errs = [r for r in bad if r["connector"] == c["name"]]
            click.echo(f"{c['name']}: " + ("valid" if not errs else f"{len(errs)} error(s)"))
            for r in errs:
                click.echo(f"  {r['key']}: {r['error']}")
    if bad:
        raise ConfigError(f"connectors validate: {len(bad)} error(s): "
                          + "; ".join(f"{r['connector']} {r['key']}: {r['error'][:200]}" for r in bad))
