"""`hudi-cdc local up | down | status`: the local registry, metastore and thrift server."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from ..errors import ConfigError
from ..output import emit, output_option, progress

SERVICE_CHOICE = click.Choice(["registry", "metastore", "thriftserver"])


def _data_dir_option(f):
    return click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="where state, logs and the metastore database live "
                             "(default: $HUDI_CDC_HOME/stack, HUDI_CDC_HOME=~/.cache/hudi-cdc)")(f)


def _only_option(f):
    return click.option("--only", "only", type=SERVICE_CHOICE, multiple=True,
                        help="act on this service only (repeatable); default: all three")(f)


@click.group("local")
def local():
    """Start/stop the local registry (Apicurio), Hive metastore and Spark Thrift Server."""


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
@_only_option
@output_option
def up_cmd(data_dir, registry_port, metastore_port, thrift_port, apicurio_version,
           registry_username_env, registry_password_env, only, output):
    """Start the stack in the background on 127.0.0.1 and wait until every service answers."""
    from ..stack import Stack, StackConfig

    changes = {"registry_port": registry_port, "metastore_port": metastore_port, "thrift_port": thrift_port,
               "apicurio_version": apicurio_version}
    base = StackConfig.saved(data_dir)
    cfg_kwargs = {**base.to_state(), **{k: v for k, v in changes.items() if v is not None}}
    cfg_kwargs["data_dir"] = base.data_dir
    cfg_kwargs["registry_users"] = _registry_users(registry_username_env, registry_password_env)
    cfg = StackConfig(**cfg_kwargs)
    t0 = time.monotonic()
    rows = Stack(cfg, progress).up(list(only) or None)
    progress(f"stack up in {time.monotonic() - t0:.1f}s")
    emit(rows, output, columns=["service", "state", "pid", "url", "seconds"])


def _registry_users(user_env, password_env):
    if not user_env and not password_env:
        return {}
    if not (user_env and password_env):
        raise ConfigError("--registry-username-env and --registry-password-env go together")
    missing = [v for v in (user_env, password_env) if not os.environ.get(v)]
    if missing:
        raise ConfigError(f"environment variable(s) {', '.join(missing)} not set")
    return {os.environ[user_env]: (os.environ[password_env], "sr-admin")}


@local.command("down")
@_data_dir_option
@_only_option
@output_option
def down_cmd(data_dir, only, output):
    """Stop what `local up` started (pid files in the data dir); nothing else."""
    from ..stack import Stack, StackConfig

    rows = Stack(StackConfig.saved(data_dir), progress).down(list(only) or None)
    emit(rows, output, columns=["service", "state", "pid"])


@local.command("status")
@_data_dir_option
@_only_option
@output_option
def status_cmd(data_dir, only, output):
    """What runs where: state, pid, URL and log of each service."""
    from ..stack import Stack, StackConfig

    emit(Stack(StackConfig.saved(data_dir)).status(list(only) or None), output,
         columns=["service", "state", "pid", "url", "log"])
