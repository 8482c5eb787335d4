"""The `hudi-cdc` command: a thin click layer over the library.

Subcommands live in hudi_cdc/cli/commands/<name>.py and are imported only when used, so
`hudi-cdc --help` stays instant and heavy dependencies (pyspark, boto3, pyhive) load lazily.
Every HudiCdcError becomes one red line on stderr and the error's exit code.
"""

from __future__ import annotations

import importlib
import logging
import sys

import click

from hudi_cdc import __version__
from hudi_cdc.errors import ExitCode, HudiCdcError

# name -> (module, attribute, one-line help)
COMMANDS: dict[str, tuple] = {
    "init": ("hudi_cdc.cli.commands.core", "init_cmd", "Write a pipeline file for the embedded MoMA sample."),
    "render": ("hudi_cdc.cli.commands.core", "render_cmd", "Render properties files and spark-submit argv."),
    "render-sql": ("hudi_cdc.cli.commands.sinks", "render_sql_cmd",
                   "Render DDL and apply SQL for Trino, Spark (Iceberg), Redshift or Athena."),
    "apply": ("hudi_cdc.cli.commands.sinks", "apply_cmd", "Apply landed changes to an Iceberg table (local Spark)."),
    "sample": ("hudi_cdc.cli.commands.core", "sample_cmd", "Land the MoMA sample as Kafka Connect S3-sink Avro files."),
    "bootstrap": ("hudi_cdc.cli.commands.core", "bootstrap_cmd",
                  "BULK_INSERT everything landed so far into new tables."),
    "stream": ("hudi_cdc.cli.commands.core", "stream_cmd",
               "UPSERT new landed files into a table, or --all of them (continuous or --once)."),
    "run": ("hudi_cdc.cli.commands.run", "run_cmd",
            "Capture (with a database) and stream --all under one supervisor, until SIGTERM."),
    "add-table": ("hudi_cdc.cli.commands.onboard", "add_table_cmd",
                  "Register, bootstrap alone and stream one more table while the others stream."),
    "demo": ("hudi_cdc.cli.commands.core", "demo_cmd",
             "Sample -> bootstrap -> changes -> stream --once, then show rows."),
    "show": ("hudi_cdc.cli.commands.core", "show_cmd", "Show current rows of a table (hudi-rs, no JVM)."),
    "query": ("hudi_cdc.cli.commands.query", "query", "Time travel, history, incremental reads."),
    "inspect": ("hudi_cdc.cli.commands.inspect", "inspect", "Commits, stats, compactions, files, schema of a table."),
    "local": ("hudi_cdc.cli.commands.local", "local", "Start/stop the local registry, metastore and thrift server."),
    "schemas": ("hudi_cdc.cli.commands.schemas", "schemas", "Register and check Avro schemas in the registry."),
    "hive": ("hudi_cdc.cli.commands.hive", "hive", "Hive metastore helpers over PyHive."),
    "sync": ("hudi_cdc.cli.commands.hive", "sync_cmd", "Re-sync a table to the Hive metastore without writing data."),
    "table": ("hudi_cdc.cli.commands.table", "table",
              "Convert the pipeline's tables to hudi.table_version (Hudi's own downgrade)."),
    "status": ("hudi_cdc.cli.commands.status", "status_cmd",
               "Freshness, backlog and compaction state per table (no JVM)."),
    "report": ("hudi_cdc.cli.commands.report", "report_cmd",
               "Static HTML page with charts per table: commits, freshness, file sizes, MoR log growth."),
    "emr": ("hudi_cdc.cli.commands.emr", "emr", "Status, logs and cancel for submitted EMR steps and job runs."),
    "capture": ("hudi_cdc.cli.commands.capture", "capture_cmd",
                "Land a PostgreSQL database's changes with Debezium (--once)."),
    "verify": ("hudi_cdc.cli.commands.capture", "verify_cmd", "Compare a Hudi table with its source database table."),
    "source": ("hudi_cdc.cli.commands.capture", "source", "Check the source database is ready for change capture."),
    "connectors": ("hudi_cdc.cli.commands.capture", "connectors",
                   "Kafka Connect: render, validate, deploy, status, restart, delete the pipeline's connectors."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        module, attr, _ = spec
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                return None  # not built yet
            raise
        return getattr(mod, attr, None)

    def format_commands(self, ctx, formatter):
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "-c", "config", default=None, metavar="FILE",
              help="pipeline file (default: ./hudi-cdc.yaml)")
@click.option("--target", type=click.Choice(["local", "emr", "emr-serverless"]), default="local",
              show_default=True, help="where jobs run")
@click.option("--debug", is_flag=True, help="tracebacks instead of one-line errors")
@click.version_option(__version__, prog_name="hudi-cdc")
@click.pass_context
def cli(ctx, config, target, debug):
    """Land Debezium CDC files in Apache Hudi tables, from one pipeline file."""
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not debug:  # a retried request ends in one error line that counts the attempts
        logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    ctx.ensure_object(dict)
    ctx.obj.update(config=config, target=target, debug=debug)


def main(argv=None) -> int:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        code = cli.main(args=argv, prog_name="hudi-cdc", standalone_mode=False)
        return code if isinstance(code, int) else ExitCode.OK  # ctx.exit(N) of a command (e.g. status bounds)
    except HudiCdcError as exc:
        if debug:
            details = getattr(exc, "details", "")
            if details:  # what the one line summarises (e.g. a failed EMR step's stderr tail)
                click.echo(details, err=True)
            raise
        click.secho(f"error: {exc}", fg="red", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return ExitCode.INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return ExitCode.INTERRUPTED


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
