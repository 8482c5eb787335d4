"""init, render, sample, bootstrap, stream, show, demo: each a few lines over the library."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import click

from hudi_cdc.cli import views
from hudi_cdc.cli.commands import pipeline_from, pipeline_loader, target_of
from hudi_cdc.cli.locate import BY_SUFFIX
from hudi_cdc.cli.output import Output, emit, output_option, progress, render

TYPE_CHOICE = click.Choice(["cow", "mor"])


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--registry", default="", help="schema registry ccompat URL to put in the file")
@click.option("--metastore", default="", help="Hive metastore thrift URI to put in the file")
@click.option("--force", is_flag=True, help="overwrite an existing pipeline file")
@click.option("--from-database", "from_db", is_flag=True,
              help="the tables section from a live database (an existing file: only new tables are added)")
@click.option("--kind", type=click.Choice(["postgresql", "mysql", "mariadb"]), default="postgresql", show_default=True,
              help="with --from-database, a new file: the source database's kind")
@click.option("--host", default="127.0.0.1", show_default=True, help="with --from-database, a new file: server")
@click.option("--port", default=None, type=int, help="with --from-database, a new file: port (default: 5432, "
              "3306 for mysql/mariadb)")
@click.option("--dbname", default=None, help="with --from-database, a new file: database")
@click.option("--user", default=None, help="with --from-database, a new file: user")
@click.option("--password-env", default=None, metavar="VAR", help="the env var holding the password (never the value)")
@click.option("--schema", "schemas", multiple=True, help="schemas to read (default: public; mysql/mariadb: "
              "the database)")
@click.option("--table", "tables", multiple=True, help="only these tables (schema.table or table; repeatable)")
@click.option("--partition-field", "partitions", multiple=True, metavar="TABLE=COLUMN",
              help="a table's partition field (repeatable; default: none, candidates listed in a comment)")
@click.option("--ordering-field", default="__lsn", show_default=True, help="ordering field of the new tables")
@click.option("--topic-prefix", default=None, help="Debezium topic prefix (default: the file's, else the database)")
@click.option("--dry-run", is_flag=True, help="print the resulting file instead of writing it")
def init_cmd(directory, registry, metastore, force, from_db, kind, host, port, dbname, user, password_env, schemas,
             tables, partitions, ordering_field, topic_prefix, dry_run):
    """Write hudi-cdc.yaml into DIRECTORY: the MoMA sample's, or (--from-database) one from a live database."""
    if not from_db:
        from hudi_cdc.demo.workspace import write_sample_pipeline

        render(Output(notes=[write_sample_pipeline(Path(directory), registry, metastore, force)]))
        return
    from hudi_cdc.sources.init import init_from_database, new_database, partition_fields, write

    db, password = new_database(Path(directory), host, port, dbname, user, password_env, kind)
    result = init_from_database(Path(directory), db, password, schemas=list(schemas) or None,
                                tables=list(tables) or None,
                                partition_fields=partition_fields(partitions), ordering_field=ordering_field,
                                prefix=topic_prefix, registry=registry, metastore=metastore, progress=progress)
    if dry_run:
        click.echo(result.text, nl=False)
    elif result.changed:
        write(result)
    progress(result.summary(dry_run))


@click.command("render")
@click.option("--out", "out", default="properties", show_default=True, type=click.Path(file_okay=False),
              help="directory for the properties files")
@click.option("--props-base", default=None, help="where jobs will read the properties from (default: --out)")
@click.option("--emr-steps", is_flag=True, help="print EMR step definitions (JSON) instead")
@click.option("--all", "all_tables", is_flag=True,
              help="with --emr-steps: `stream --all`'s ONE step (every table, hudi.engine: hudi-cdc)")
@output_option
@click.pass_context
def render_cmd(ctx, out, props_base, emr_steps, all_tables, output):
    """Write the properties files and print each job's spark-submit argv."""
    from hudi_cdc.pipeline import plan

    if all_tables and not emr_steps:
        raise click.UsageError("--all: only with --emr-steps")
    if emr_steps:
        emit(plan.emr_steps(pipeline_from(ctx), all_tables), "json")
        return
    rows = plan.job_argvs(pipeline_from(ctx), Path(out), props_base, target_of(ctx), progress)
    render(views.job_argvs(rows), output)


@click.command("sample")
@click.argument("dataset", type=click.Choice(["moma"]))
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--stage", type=click.Choice(["snapshot", "changes", "all"]), default="snapshot", show_default=True,
              help="snapshot (op=r) files, the seed's change files, or both")
@click.option("--count", type=int, default=None, help="with --stage changes: land only the next N change files")
@click.pass_context
def sample_cmd(ctx, dataset, directory, stage, count):
    """Land the MoMA sample under DIRECTORY (default: the pipeline's source.root)."""
    from hudi_cdc.demo.workspace import land_sample, landing_root

    land_sample(landing_root(directory, pipeline_loader(ctx)), stage, count, progress)


@click.command("bootstrap")
@click.option("--table", default=None, help="only this table (default: every table)")
@click.option("--force", is_flag=True, help="rebuild a table that exists already")
@click.option("--dry-run", is_flag=True, help="print what would run")
@output_option
@click.pass_context
def bootstrap_cmd(ctx, table, force, dry_run, output):
    """BULK_INSERT (with --filter-dupes) everything landed so far, every table and table type."""
    from hudi_cdc import pipeline as pipe

    with _partial_results(output):
        results = pipe.bootstrap(pipeline_from(ctx), table, force=force, target=target_of(ctx), dry_run=dry_run,
                                 progress=progress, show=click.echo)
    render(views.job_results(results), output)


@contextmanager
def _partial_results(output):
    """Some table jobs failed, the others went on: theirs are shown as usual, then the one error line."""
    from hudi_cdc.errors import TablesFailed

    try:
        yield
    except TablesFailed as exc:
        if exc.results:
            render(views.job_results(exc.results), output)
        raise


@click.command("stream")
@click.option("--table", default=None, help="the table to stream")
@click.option("--all", "all_tables", is_flag=True,
              help="every table and type of the pipeline in ONE Spark application (docs/stream-all.md)")
@click.option("--type", "ttype", type=TYPE_CHOICE, default=None, help="only the cow or mor table")
@click.option("--once", is_flag=True, help="one sync round, then exit (tests, schedulers)")
@click.option("--dry-run", is_flag=True, help="print what would run")
@output_option
@click.pass_context
def stream_cmd(ctx, table, all_tables, ttype, once, dry_run, output):
    """Continuous UPSERT of newly landed files, starting where the last commit's checkpoint ended."""
    from hudi_cdc import pipeline as pipe

    if all_tables:
        if table or ttype:
            raise click.UsageError("--all streams every table and type: give --table/--type or --all")
        target = target_of(ctx)
        with _partial_results(output):
            results = pipe.stream_all(pipeline_from(ctx), once=once, target=target, dry_run=dry_run,
                                      progress=progress, show=click.echo)
        local_loops = not once and target == "local"
        render(views.stream_all_results(results) if local_loops else views.job_results(results), output)
        return
    if not table:
        raise click.UsageError("give --table TABLE, or --all for every table")
    with _partial_results(output):
        results = pipe.stream(pipeline_from(ctx), table, once=once, table_type=BY_SUFFIX.get(ttype),
                              target=target_of(ctx), dry_run=dry_run, progress=progress,
                              show=click.echo)
    render(views.job_results(results), output)


@click.command("show")
@click.option("--table", required=True)
@click.option("--type", "ttype", type=TYPE_CHOICE, default="cow", show_default=True)
@click.option("--key", "keys", multiple=True, help="record key value(s) to show (default: all rows)")
@click.option("--columns", default=None, help="comma-separated columns")
@output_option
@click.pass_context
def show_cmd(ctx, table, ttype, keys, columns, output):
    """Current rows of a table, read with hudi-rs (no JVM)."""
    from hudi_cdc.lake.reader import current_rows

    rows = current_rows(pipeline_from(ctx), table, BY_SUFFIX[ttype], keys=list(keys),
                        columns=columns.split(",") if columns else None)
    render(Output.rows(rows), output)


@click.command("demo")
@click.argument("directory", default="demo", type=click.Path(file_okay=False))
@click.option("--registry", default="", help="use this schema registry (ccompat URL)")
@click.option("--metastore", default="", help="sync to this Hive metastore (thrift URI)")
@click.option("--from-postgres", "from_postgres", is_flag=True,
              help="the whole chain from a real PostgreSQL: the MoMA sample loaded into it, capture (Debezium), "
                   "bootstrap, the seed's changes by SQL, capture, stream --once, verify")
@click.option("--pg-dsn", default=None, metavar="DSN",
              help="with --from-postgres: this database (libpq DSN without password) instead of a throwaway "
                   "cluster of the demo's own")
@click.option("--password-env", default=None, metavar="VAR",
              help="with --pg-dsn: the env var holding the password (default PGPASSWORD; never the value)")
@click.option("--from-mariadb", "from_mariadb", is_flag=True,
              help="the whole chain from a throwaway MariaDB of the demo's own: a typed table loaded, capture "
                   "(Debezium's MariaDB connector), bootstrap, SQL changes and a DDL, capture, stream --once, verify")
@click.option("--keep-db", is_flag=True,
              help="with --from-postgres/--from-mariadb: leave the demo's own server running")
def demo_cmd(directory, registry, metastore, from_postgres, pg_dsn, password_env, from_mariadb, keep_db):
    """The whole sample flow in DIRECTORY: sample -> bootstrap -> changes -> stream --once -> rows.

    With --from-postgres: PostgreSQL -> capture -> bootstrap -> SQL changes -> capture -> stream --once
    -> verify -> rows; exit 10 when verify finds a difference. With --from-mariadb: the same from MariaDB."""
    if from_mariadb:
        given = [o for o, v in (("--from-postgres", from_postgres), ("--pg-dsn", pg_dsn),
                                ("--password-env", password_env), ("--registry", registry),
                                ("--metastore", metastore)) if v]
        if given:
            raise click.UsageError(f"{', '.join(given)}: not with --from-mariadb")
        from hudi_cdc.demo.mariadb import run_mariadb_demo

        run_mariadb_demo(Path(directory), keep_db=keep_db, progress=progress, show=click.echo)
        return
    if not from_postgres:
        given = [o for o, v in (("--pg-dsn", pg_dsn), ("--password-env", password_env), ("--keep-db", keep_db)) if v]
        if given:
            raise click.UsageError(f"{', '.join(given)}: only with --from-postgres")
        from hudi_cdc.demo import run_demo

        run_demo(Path(directory), registry=registry, metastore=metastore, progress=progress, show=click.echo)
        return
    if password_env and not pg_dsn:
        raise click.UsageError("--password-env: only with --pg-dsn (the demo's own cluster sets its password itself)")
    from hudi_cdc.demo.postgres import run_postgres_demo

    run_postgres_demo(Path(directory), dsn=pg_dsn, password_env=password_env, keep_db=keep_db, registry=registry,
                      metastore=metastore, progress=progress, show=click.echo)
