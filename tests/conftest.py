"""Shared fixtures (tests/plugins/*.py, auto-loaded) and the test tiers.

Tests that start a real component carry its mark: spark (a JVM with the Hudi bundle), e2e (the CLI
through spark-submit), hive, registry (the local stack), aws (moto's server), s3 (the local
s3proxy endpoint), postgres (a throwaway PostgreSQL cluster, tests/plugins/postgres.py), mariadb (a
throwaway MariaDB server, tests/plugins/mariadb.py), browser
(Debian's headless chromium), kafka (a local Kafka broker + Connect worker, tests/plugins/kafka.py)
cluster (a Spark standalone master + worker, tests/plugins/spark_cluster.py) and trino (a Trino
server on the stack's metastore, tests/plugins/trino.py).
A test that uses a fixture starting one of them gets that mark here, whatever its module declares;
every test with none of these marks is marked ``unit`` (``pytest -m unit``: no JVM, no services, seconds).
"""

import os
from pathlib import Path

import pytest

# Every JVM the tests start (each spark-submit, the 0.14 engine, the stack's services, Trino, Kafka)
# lives seconds to minutes on small data: C1 alone compiles enough, and the C2 compiles it saves are a third
# of a bootstrap's CPU (51-62 s -> 38-40 s for the sample's bootstrap on this 2-core machine). A user's own
# JVMs keep the JVM's default (hudi_cdc/core/render.py picks it per job). A worker's one long-lived
# SparkSession is not: it runs hundreds of rounds, C2 and G1 pay there (tests/plugins/spark.py).
# JDK_JAVA_OPTIONS (the java launcher's), not JAVA_TOOL_OPTIONS: a JVM embedded in hudi-cdc's own process
# (capture's Debezium engine, through JPype) would print "Picked up JAVA_TOOL_OPTIONS" into the command's stderr
os.environ.setdefault("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")
# Every Spark driver the tests start (the shared sessions, each spark-submit, the 0.14 engine, the stack's Thrift
# server) evaluates interpreted, not generated code: on the tests' tables (tens to thousands of rows) compiling each
# query's Java source (Janino) was most of the work. Building the MoMA sample lake (12 rounds, CoW + MoR) on a fresh
# idle session: 676 -> 470 CPU s, 435 -> 302 s wall. Results are the same both ways (Spark's own suites run each
# expression both ways); a user's jobs keep Spark's default. Spark reads spark.* system properties as settings;
# SPARK_SUBMIT_OPTS carries them to the driver JVM (not a conf dir: a non-empty one on the class path stops
# class-data sharing, hudi_cdc/spark/cds.py)
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-Dspark.sql.codegen.wholeStage=false "
                      "-Dspark.sql.codegen.factoryMode=NO_CODEGEN")

_plugins = sorted(p.stem for p in (Path(__file__).parent / "plugins").glob("*.py") if p.stem != "__init__")
pytest_plugins = [f"tests.plugins.{name}" for name in _plugins]

COMPONENT_MARKS = ("spark", "e2e", "hive", "registry", "aws", "s3", "postgres", "mariadb", "browser", "kafka",
                   "cluster", "trino")

# fixture -> the mark of the real component it starts (fixtures depending on these inherit the mark,
# since item.fixturenames holds the whole closure)
FIXTURE_MARKS = {
    "spark": "spark",
    "registry_url": "registry",
    "secured_registry": "registry",
    "hive_stack": "hive",
    "moto_endpoint": "aws",
    "s3_endpoint": "s3",
    "postgres": "postgres",
    "mariadb": "mariadb",
    "connect_worker": "kafka",
    "spark_cluster": "cluster",
    "trino": "trino",
}


# fixture -> the xdist group of the costly session service it starts: under `pytest -n 2 --dist loadgroup`
# (scripts/test.sh) every file using one of them runs on the same worker, so each service starts once
SERVICE_GROUPS = {
    "registry_url": "stack",
    "secured_registry": "stack",
    "hive_stack": "stack",
    "trino": "stack",
    "connect_worker": "kafka",
    "mariadb": "mariadb",
    "sample_lake": "sample-lake",  # tests/plugins/query_fixtures.py: built once, read by query and status
}


# The extended tier (`bash scripts/test.sh --extended`; `--all` runs both tiers): real-component tests kept out of
# the default run (the one CI makes) because its 40-minute budget cannot hold them on this 2-core machine. Each
# is a second proof, at a costlier level, of behaviours the default tier proves once: differential runs of two
# engines, soak and kill -9 variants of captures the default tier also kills, a database demo beside the
# README's, the standalone cluster beside the local runner's spark-submit, placement strategies round after
# round beside the correctness tests of the same rounds. (The machine ran the suite 2-2.4x slower in CPU
# seconds per test from 2026-11-29 on than on 2026-11-28: 36.6 -> ~88 projected minutes.)
# A test that reads what an earlier test of its module left (a module-scoped scenario) moves with that test or
# not at all.
EXTENDED = (
    "tests/runners/test_cluster.py::",  # executors of a standalone cluster over s3a, EMR steps' argv
    "tests/capture/test_types_pgbench.py::",  # pgbench + every type (types: test_types_real, test_types_query)
    "tests/runners/test_engines_differential.py::",  # the 0.14 engine and hudi-cdc's on the same landed files
    "tests/demo/test_demo_postgres.py::", "tests/demo/test_demo_mariadb.py::",  # `demo` from databases
    "tests/capture/test_capture_mysql.py::test_kill_9_mid_mariadb_capture_loses_nothing",  # PostgreSQL's in default
    "tests/pipeline/test_onboard.py::test_add_table_while_another_table_streams",
    "tests/jobs/test_log_inserts.py::test_inserts_fill_existing_file_groups_round_after_round",
    "tests/jobs/test_logkeys.py::test_view_equals_the_snapshot_read_round_after_round",
    "tests/jobs/test_keyloc.py::test_round_through_the_record_index_equals_the_events",
    "tests/jobs/test_located.py::test_one_commit_per_round_equal_to_the_index_path",
    "tests/jobs/test_async_compaction.py::test_compaction_runs_beside_the_rounds_and_the_table_stays_exact",
    "tests/runners/test_deltastreamer_real.py::test_moma_sample_bootstrap_then_changes",  # 0.14: test_types_real
    "tests/runners/test_deltastreamer_real.py::test_continuous_mor_compacts_asynchronously",
    "tests/house/test_benchmarks.py::test_benchmark_smoke",  # benchmarks are on demand
    "tests/capture/test_capture_s3.py::",  # S3 landing: tests/runners/test_s3.py
    "tests/query/test_query.py::test_spark_and_native_agree_on_every_as_of_instant[mor]",
    "tests/inspect/test_inspect_pipeline.py::test_inspect_commits_of_a_pipeline_table_agree_with_hudi[cow]",
    "tests/capture/test_capture_snapshot.py::", "tests/capture/test_app_schemas.py::",
    "tests/registry/test_registry_ddl.py::",
    # JVM-free inspection against Hudi's own commands on tables Spark writes here (Hudi's sample tables of
    # versions 6, 8 and 9 stay in the default tier)
    *(f"tests/inspect/test_inspect_spark.py::{t}[written/" for t in (
        "test_commits_agree_with_hudi_show_commits", "test_write_amplification_agrees_with_hudi_stats_wa",
        "test_compactions_agree_with_hudi", "test_compactions_agree_with_hudi_show_compaction")),
    "tests/inspect/test_inspect_spark.py::test_pipeline_like_tables_have_what_was_written",
    "tests/jobs/test_async_compaction.py::test_a_run_that_ends_compacts_inline",  # MoR tests compact inline
    "tests/capture/test_source_life.py::test_truncate_in_bootstrap_and_late_events_after_it",  # TRUNCATE: same file
    # session 44 (the history-on-Trino and MariaDB consistent-point tests came in): Hudi's index as the placement
    # beside hudi-cdc's located one; shaping into Iceberg (Iceberg's apply and shaping each stay); Trino on table
    # version 9 (the default, 6, stays); a continuous job's round-robin of its targets (`stream --all`'s scheduler,
    # the supervision and kill tests keep continuous jobs)
    "tests/jobs/test_native_readability.py::test_deletes_and_partition_moves_in_one_file_group_read_natively[index]",
    "tests/sinks/test_iceberg_sink.py::test_shaped_iceberg_apply_equals_hudi_cow",
    "tests/stack/test_trino.py::test_hudi_connector_reads_table_version_9",
    "tests/jobs/test_cdc_semantics.py::test_continuous_mode_serves_every_table_in_turn",
    # session 45: a regression test of a stop under load (~60 s of two writers; the fix is one call in capture);
    # a second proof (a whole run measured ~44 min on a slow day): JVM-free inspection of a pipeline's MoR table
    # (Hudi's sample tables of versions 6, 8, 9 stay)
    "tests/capture/test_capture_mysql.py::test_a_capture_stopped_while_the_server_is_busy_exits",
    "tests/inspect/test_inspect_pipeline.py::test_inspect_commits_of_a_pipeline_table_agree_with_hudi[mor]",
    # session 46 (a whole run took 44 min on this day's machine): pgbench's invariant at consistent points on
    # PostgreSQL with MoR tables read by hudi-rs, a second proof (tests/stack/test_history_trino.py holds the
    # invariant at every cut with read_consistent(); test_transactions_mariadb.py the MoR points; the raw
    # history table: test_keyless_history_table)
    "tests/jobs/test_transactions.py::test_pgbench_invariant_at_consistent_points",
    # session 47 (CI took 2,618 s with setup; the budget is 40 minutes): NaN, overflowing numerics and BC dates
    # captured from PostgreSQL and kept in __rejects, a second proof (tests/capture/test_edge_catalogue.py lands
    # NaN, Infinity, 1e100 and BC dates with their rejected counts; test_types_pgbench the counts status reads; the
    # unit tier the rules); `query --engine spark` over s3a (HiveServer2 reads the same S3 tables in the default tier)
    "tests/jobs/test_types_real.py::test_numeric_nan_and_overflow_are_never_silent",
    "tests/runners/test_s3.py::test_spark_query_reads_s3_tables",
    # capture -> bootstrap -> stream -> verify on PostgreSQL's MoMA tables, a second proof (the same chain with
    # verify runs in test_toast_ddl, test_types_real and test_run_pipeline; verify naming a difference:
    # test_types_real::test_corrupted_lake_value_is_a_difference)
    "tests/capture/test_capture.py::test_database_to_lake_chain_verifies",
)

DURATIONS = Path(__file__).parent / "durations.json"  # seconds per test file, from a measured whole run


def _xdist_groups(items, marks: bool = True) -> None:
    """One xdist group per test file (module-scoped fixtures are built once), except that a file using a
    service of SERVICE_GROUPS joins that service's group. Groups go out longest first (their files'
    seconds in tests/durations.json, refreshed from a whole run's --durations=0 by scripts/durations.py): the
    workers end together instead of one finishing a long file alone."""
    import json

    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    group_of: dict[str, str] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        service = next((SERVICE_GROUPS[f] for f in getattr(item, "fixturenames", ()) if f in SERVICE_GROUPS), None)
        if service is not None:
            group_of[path] = service
        group_of.setdefault(path, path)
    weight: dict[str, float] = {}
    for path, group in group_of.items():
        weight[group] = weight.get(group, 0.0) + seconds.get(path, 0.0)
    position = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda it: (-weight[group_of[it.nodeid.split("::")[0]]], position[id(it)]))
    for item in items if marks else ():  # without pytest-xdist (-p no:xdist) the mark is unknown
        item.add_marker(pytest.mark.xdist_group(group_of[item.nodeid.split("::")[0]]))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which turns the marks into the groups
def pytest_collection_modifyitems(config, items):
    _xdist_groups(items, config.pluginmanager.hasplugin("xdist"))
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            mark = FIXTURE_MARKS.get(fixture)
            if mark and item.get_closest_marker(mark) is None:
                item.add_marker(mark)
        if not any(item.get_closest_marker(m) for m in COMPONENT_MARKS):
            item.add_marker("unit")
        elif item.nodeid.startswith(EXTENDED):
            item.add_marker("extended")
