"""`hudi-cdc local up | down | status`: the local registry, metastore and thrift server."""

from __future__ import annotations

from pathlib import Path

import click

from hudi_cdc.cli.output import Output, output_option, progress, render
from hudi_cdc.stack import local as local_stack

SERVICE_CHOICE = click.Choice(["registry", "metastore", "thriftserver", "s3", "trino"])


def _data_dir_option(f):
    return click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="where state, logs and the metastore database live "
                             "(default: $HUDI_CDC_HOME/stack, HUDI_CDC_HOME=~/.cache/hudi-cdc)")(f)


def _only_option(f):
    return click.option("--only", "only", type=SERVICE_CHOICE, multiple=True,
                        help="act on this service only (repeatable); default: the registry, metastore and thrift "
                             "server (and the S3 endpoint and Trino when they run)")(f)


@click.group("local")
def local():
    """Start/stop the local registry (Apicurio), Hive metastore and Spark Thrift Server (and S3, Trino)."""


@local.command("up")
@_data_dir_option
@click.option("--registry-port", type=int, default=None, help="Apicurio HTTP port (default 8080; health on port+1)")
@click.option("--metastore-port", type=int, default=None, help="Hive metastore thrift port (default 9083)")
@click.option("--thrift-port", type=int, default=None, help="Spark Thrift Server (HiveServer2) port (default 10000)")
@click.option("--apicurio-version", default=None, help="io.apicurio:apicurio-registry-app version (default 3.3.3)")
@click.option("--registry-username-env", default=None, metavar="VAR",
              help="turn on registry basic auth: an admin user named by this environment variable")
@click.option("--registry-password-env", default=None, metavar="VAR",
              help="... with the password in this environment variable (never written anywhere)")
@click.option("--s3", "with_s3", is_flag=True,
              help="also start the S3-compatible endpoint (s3proxy, filesystem backend) with a bucket")
@click.option("--s3-port", type=int, default=None, help="S3 endpoint port (default 9000)")
@click.option("--s3-bucket", default=None, help="bucket to create on the S3 endpoint (default hudi-cdc)")
@click.option("--trino", "with_trino", is_flag=True,
              help="also start Trino (hive, iceberg and hudi catalogs on the metastore; docs/trino.md)")
@click.option("--trino-port", type=int, default=None, help="Trino HTTP port (default 8090)")
@_only_option
@output_option
def up_cmd(data_dir, registry_port, metastore_port, thrift_port, apicurio_version,
           registry_username_env, registry_password_env, with_s3, s3_port, s3_bucket, with_trino, trino_port,
           only, output):
    """Start the stack in the background on 127.0.0.1 and wait until every service answers.

    With --s3 the S3 endpoint too: clients reach it with AWS_ENDPOINT_URL=http://127.0.0.1:9000,
    AWS_ACCESS_KEY_ID=hudi-cdc-local and AWS_SECRET_ACCESS_KEY=hudi-cdc-local-secret (docs/s3.md).
    With --trino Trino too, on http://127.0.0.1:8090 (docs/trino.md; the first start downloads ~820 MB)."""
    changes = {"registry_port": registry_port, "metastore_port": metastore_port, "thrift_port": thrift_port,
               "apicurio_version": apicurio_version, "s3_port": s3_port, "s3_bucket": s3_bucket,
               "s3": True if with_s3 else None, "trino_port": trino_port}
    users = local_stack.registry_users(registry_username_env, registry_password_env)
    only = local_stack.with_optional(only, s3=with_s3, trino=with_trino)
    rows = local_stack.up(data_dir, changes, users, only, progress)
    render(Output.rows(rows, ["service", "state", "pid", "url", "seconds"]), output)


@local.command("down")
@_data_dir_option
@_only_option
@output_option
def down_cmd(data_dir, only, output):
    """Stop what `local up` started (pid files in the data dir); nothing else."""
    render(Output.rows(local_stack.down(data_dir, only, progress), ["service", "state", "pid"]), output)


@local.command("status")
@_data_dir_option
@_only_option
@output_option
def status_cmd(data_dir, only, output):
    """What runs where: state, pid, URL and log of each service."""
    render(Output.rows(local_stack.status(data_dir, only), ["service", "state", "pid", "url", "log"]), output)
