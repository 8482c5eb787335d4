"""The Spark session a query runs on: the process's active one (a notebook, tests), or a local one
started for the call and stopped after it, with the JVM's stdout kept off ours."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hudi_cdc.config import Pipeline


@contextmanager
def spark_for(engine: str, pipeline: Pipeline | None = None,
              progress: Callable[[str], None] = lambda m: None) -> Iterator[object]:
    """None for engine "native"; for "spark" the active session (kept), else a new local one (stopped)."""
    if engine != "spark":
        yield None
        return
    from pyspark.sql import SparkSession

    from hudi_cdc.query.spark_engine import start_session

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    progress("starting Spark (use --engine native to read without a JVM) ...")
    with jvm_stdout_to_stderr():
        spark = start_session(pipeline)
    try:
        yield spark
    finally:
        spark.stop()


@contextmanager
def jvm_stdout_to_stderr() -> Iterator[None]:
    """A JVM started meanwhile inherits stderr as its stdout: what it prints (Hudi's JOL agent
    warnings) cannot corrupt `-o json` on our stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
