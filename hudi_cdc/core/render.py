"""Render HoodieStreamer properties files and spark-submit argv from Jinja2 templates.

Templates live in templates/<profile>/ (installed as the package hudi_cdc.templates):
base.properties.j2, table.properties.j2 and spark-submit.args.j2 (one argument per line, so the
argv is a list and never a shell string). StrictUndefined: a missing variable is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2

from hudi_cdc.common.spark_conf import HUDI_SESSION_CONF, as_pairs, codegen_cache_conf, local_conf
from hudi_cdc.config import TYPE_SUFFIX, Pipeline, history_name
from hudi_cdc.config.settings import CURRENT_HUDI
from hudi_cdc.config.topic import kafka_topic
from hudi_cdc.core.lock_provider import lock_flags
from hudi_cdc.core.profiles import HUDI_CDC, Profile, engine_for, profile_for
from hudi_cdc.errors import ConfigError
from hudi_cdc.job_package import JOB_SCRIPT_NAME, JOB_ZIP_NAME

OPS = ("BULK_INSERT", "UPSERT", "INSERT")
TRANSFORMER_CLASS = "org.apache.hudi.utilities.transform.SqlQueryBasedTransformer"


def _env() -> jinja2.Environment:
    root = resources.files("hudi_cdc.templates")
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


_ENV: jinja2.Environment | None = None


def env() -> jinja2.Environment:
    global _ENV
    if _ENV is None:
        _ENV = _env()
    return _ENV


def _render(profile: Profile, template: str, **ctx) -> str:
    try:
        return env().get_template(f"{profile.template_dir}/{template}").render(**ctx)
    except jinja2.UndefinedError as exc:  # a bug in hudi-cdc, but say where
        raise ConfigError(f"template {profile.template_dir}/{template}: {exc.message}") from None


@dataclass(frozen=True)
class Job:
    """One streamer job: a table, a table type and an operation."""

    table: str
    table_type: str
    op: str
    continuous: bool = False
    all_tables: bool = False  # `stream --all`: hudi-cdc's streamer loops per table (jobs/stream/loops.py)

    @property
    def suffix(self) -> str:
        return TYPE_SUFFIX[self.table_type]

    @property
    def name(self) -> str:
        mode = "continuous" if self.continuous else ("once" if self.op == "UPSERT" else "bootstrap")
        return f"{self.table}_{self.suffix}-{self.op.lower()}-{mode}"


def profile(pipeline: Pipeline) -> Profile:
    return profile_for(pipeline.hudi.version)


def props_filename(pipeline: Pipeline, table: str, table_type: str) -> str:
    prof = profile(pipeline)
    return prof.props_file_pattern.format(
        table=table, suffix=TYPE_SUFFIX[table_type],
        registry="apicurio_" if pipeline.source.schema_registry else "",
    )


def registry_subject_url(pipeline: Pipeline, table: str) -> str | None:
    base = pipeline.source.schema_registry
    if not base:
        return None
    return f"{base.rstrip('/')}/subjects/{kafka_topic(pipeline.table(table).topic)}-value/versions/latest"


def delete_sql(pipeline: Pipeline, table: str) -> str:
    field = pipeline.table(table).delete_field
    return f"SELECT *, ({field} = 'true') AS _hoodie_is_deleted FROM <SRC>"


def refuse_shaping(pipeline: Pipeline, table: str, engine: str) -> None:
    """HoodieStreamer (the 0.14 and seed profiles, EMR's) does not apply a table's shaping, nor read a
    routed table's several landing folders: one line."""
    if pipeline.table(table).route is not None:
        raise ConfigError(f"tables.{table}.route: a routed table (several source tables) is read by hudi-cdc's "
                          f"streamer only, not by {engine}, which reads one landing folder per table; use "
                          f"hudi.version {CURRENT_HUDI} with hudi.engine hudi-cdc ({pipeline.source_file})")
    if not pipeline.shape(table).empty:
        raise ConfigError(f"tables.{table}: columns/mask/filter/derive/types are applied by hudi-cdc's streamer "
                          f"and the local 0.14 engine, not by {engine}; use hudi.version {CURRENT_HUDI} with "
                          f"hudi.engine hudi-cdc ({pipeline.source_file})")


def table_properties(pipeline: Pipeline, table: str, table_type: str) -> str:
    t = pipeline.table(table)
    prof = profile(pipeline)
    shape = pipeline.shape(table)
    if prof.name == "seed":  # 0.14.0's HoodieDeltaStreamer gets it in its typed SQL (deltastreamer/shaped_sql.py)
        refuse_shaping(pipeline, table, f"Hudi {prof.hudi_version}'s HoodieStreamer")
    route = pipeline.route(table)
    if route is not None and registry_subject_url(pipeline, table):
        raise ConfigError(f"tables.{table}.route: a routed table reads its shards' landed schemas; schemas from a "
                          f"registry (source.registry_url) are not built for it ({pipeline.source_file})")
    return _render(
        prof, "table.properties.j2",
        pipeline=pipeline.pipeline, hudi_version=pipeline.hudi.version, table=table, table_type=table_type,
        record_key=",".join(t.record_keys), multi_key=len(t.record_keys) > 1,
        partition_field=t.partition_field, ordering_field=",".join(t.ordering_fields),
        dfs_root=pipeline.topic_dir(table), registry_url=registry_subject_url(pipeline, table),
        deletes=t.deletes, delete_field=t.delete_field, delete_sql=delete_sql(pipeline, table),
        hive_database=pipeline.hive_db(table_type), metastore_uris=pipeline.lake.hive_metastore,
        compaction_delta_commits=t.compaction_delta_commits, compaction_max_seconds=t.compaction_max_seconds,
        overrides=sorted(t.hudi_options.items()), shape_json="" if shape.empty else shape.to_json(),
        route_json=route.to_json() if route is not None else "",
        history=t.history, history_path=pipeline.history_base_path(table, table_type) if t.history else "",
        history_table=history_name(table),
    )


def base_properties(pipeline: Pipeline) -> str:
    return _render(profile(pipeline), "base.properties.j2", pipeline=pipeline.pipeline,
                   hudi_version=pipeline.hudi.version, parallelism=pipeline.spark.shuffle_partitions,
                   metadata_table=str(pipeline.hudi.metadata_table).lower(),
                   table_version=pipeline.hudi.writes_table_version)


def render_properties(pipeline: Pipeline) -> dict[str, str]:
    """Every properties file of the pipeline: {file name: text}."""
    out = {"base.properties": base_properties(pipeline)}
    for table, tt in pipeline.targets():
        out[props_filename(pipeline, table, tt)] = table_properties(pipeline, table, tt)
    return out


def write_properties(pipeline: Pipeline, out_dir: Path) -> list[Path]:
    """Write the properties files; unchanged files are left untouched (idempotent re-runs)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_properties(pipeline).items():
        path = out_dir / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    return written


def streamer_flags(pipeline: Pipeline, job: Job, props_uri: str, *, enable_sync: bool | None = None) -> list[str]:
    """HoodieStreamer's own flags for one job (the same for every target)."""
    t = pipeline.table(job.table)
    prof = profile(pipeline)
    if job.op not in OPS:
        raise ConfigError(f"unknown operation {job.op!r}")
    if prof.name == "v014" and len(t.ordering_fields) > 1:
        raise ConfigError(f"tables.{job.table}.ordering_field: Hudi {prof.hudi_version} orders by one field only "
                          f"(got {', '.join(t.ordering_fields)})")
    flags = ["--table-type", job.table_type,
             prof.ordering_flag, ",".join(t.ordering_fields) if prof.name != "seed" else t.ordering_fields[0],
             "--props", props_uri,
             "--source-class", "org.apache.hudi.utilities.sources.AvroDFSSource",
             "--target-base-path", pipeline.base_path(job.table, job.table_type) + ("/" if prof.name == "seed" else ""),
             # 0.14 initialises the table with --target-table as hoodie.table.name, and then refuses the
             # properties' hoodie.table.name=<table> on the next run: there it is the bare table name.
             "--target-table", job.table if prof.name == "v014" else f"{pipeline.hive_db(job.table_type)}.{job.table}"]
    if prof.payload_class:
        flags += ["--payload-class", prof.payload_class]
    if pipeline.source.schema_registry:
        flags += ["--schemaprovider-class", "org.apache.hudi.utilities.schema.SchemaRegistryProvider"]
    elif prof.file_schema_provider:
        flags += ["--schemaprovider-class", prof.file_schema_provider]
    if t.deletes == "hard":
        flags += ["--transformer-class", TRANSFORMER_CLASS]
    sync = pipeline.lake.sync_enabled if enable_sync is None else enable_sync
    if sync:
        flags.append("--enable-sync")
    if job.continuous:
        flags.append("--continuous")
        if prof.name != "seed":
            flags += ["--min-sync-interval-seconds", str(pipeline.stream.min_sync_interval_seconds)]
    if job.op == "UPSERT" and prof.name != "seed":
        flags += ["--source-limit", str(pipeline.stream.source_limit)]
    # continuous: a loop per table; --once: the tables' rounds side by side (hudi-cdc's streamer: not the
    # real HoodieDeltaStreamer of the 0.14 profile, which runs the tables one after another)
    if job.all_tables and (job.continuous or prof.name != "v014"):
        flags += all_tables_flags(pipeline)
    flags += ["--op", job.op]
    if job.op == "BULK_INSERT":
        flags.append("--filter-dupes")
    return flags


def all_tables_flags(pipeline: Pipeline) -> list[str]:
    """hudi-cdc's streamer only: `stream --all`, every table scheduled in one application, a failing one backing off
    alone (the supervision settings of `stream`, applied per table)."""
    s = pipeline.stream
    return ["--all-tables", "--retry-backoff-seconds", str(s.restart_backoff_seconds),
            "--retry-backoff-max-seconds", str(s.restart_backoff_max_seconds), "--max-failures", str(s.max_restarts),
            "--failure-window-seconds", str(s.restart_window_seconds),
            "--max-parallel-rounds", str(s.max_parallel_rounds), *([] if s.align_cuts else ["--no-align-cuts"])]


# The driver JVM's flags. A JVM that runs one stream round and exits (`stream --once`, the supervised
# per-round processes) spends much of its life compiling: C1 only (no C2 compiler threads competing
# for 2 cores) and the parallel collector took a 1% round at 1M rows from 19.1 s to 14.3 s (MoR) and
# 25.2 s to 20.8 s (CoW), a 100k-row round from 20.4 s to 14.4 s. Bootstraps (CPU-heavy: 1M rows
# 22 s -> 24 s with C1 only) and continuous streams (one JVM for many rounds) keep the default tiers.
JAVA_OPTIONS = "-XX:+UseG1GC -Djdk.attach.allowAttachSelf=true"
SHORT_ROUND_JAVA_OPTIONS = "-XX:+UseParallelGC -XX:TieredStopAtLevel=1 -Djdk.attach.allowAttachSelf=true"


def spark_confs_local(pipeline: Pipeline, short_round: bool = False) -> list[str]:
    s = pipeline.spark
    confs = {
        **local_conf(s.shuffle_partitions),
        **HUDI_SESSION_CONF,
        "spark.driver.extraJavaOptions": SHORT_ROUND_JAVA_OPTIONS if short_round else JAVA_OPTIONS,
        **codegen_cache_conf(sum(len(t.table_types) for t in pipeline.tables.values())),
    }
    if not s.master.startswith("local"):  # a cluster (spark://, yarn): the executors' size too
        confs["spark.executor.memory"] = s.executor_memory
    if pipeline.lake.hive_metastore:
        confs["spark.hadoop.hive.metastore.uris"] = pipeline.lake.hive_metastore
        confs["spark.sql.catalogImplementation"] = "hive"
    if pipeline.uses_s3:  # s3a (hadoop-aws) serves s3:// too; keys come from the AWS default chain
        from hudi_cdc.common.s3 import hadoop_conf

        confs.update(hadoop_conf(pipeline.s3_endpoint()))
    confs.update(s.conf)
    return [f"{k}={v}" for k, v in confs.items()]


# Local-only writer settings: no embedded timeline server (it would listen on the network) and
# direct markers; both suit one short-lived local JVM.
LOCAL_HOODIE_CONF = ("hoodie.embed.timeline.server=false", "hoodie.write.markers.type=DIRECT")


def local_argv(pipeline: Pipeline, jobs: Sequence[Job], props_dir: Path, jars: Sequence[str],
               job_script: str, *, name: str | None = None) -> list[str]:
    """spark-submit argv running hudi-cdc's streamer for one or more jobs in a single JVM."""
    if not jobs:
        raise ConfigError("nothing to run")
    flags: list[str] = []
    for i, job in enumerate(jobs):
        if i:
            flags.append("--next")
        props = f"file://{(props_dir / props_filename(pipeline, job.table, job.table_type)).resolve()}"
        flags += streamer_flags(pipeline, job, props)
        for kv in LOCAL_HOODIE_CONF:
            flags += ["--hoodie-conf", kv]
    text = _render(profile_for("current"), "spark-submit.args.j2",
                   master=pipeline.spark.master, name=name or f"hudi-cdc-{pipeline.pipeline}",
                   driver_memory=pipeline.spark.driver_memory,
                   confs=spark_confs_local(pipeline, short_round=all(j.op == "UPSERT" and not j.continuous
                                                                     for j in jobs)),
                   jars=list(jars), streamer_class=None, app_jar=job_script, streamer_flags=flags)
    return _lines(text)


def streamer_argv(pipeline: Pipeline, table: str, table_type: str, op: str, *, target: str,
                  props_uri: str, continuous: bool = False, jars: Sequence[str] = (),
                  job_script: str = "") -> list[str]:
    """The full spark-submit argv of one job for a target: local | emr | emr-serverless.

    For emr the argv is what command-runner.jar runs on the master node; for emr-serverless the
    caller takes argv[1:] apart into entryPoint / sparkSubmitParameters.
    """
    job = Job(table, table_type, op, continuous)
    prof = profile(pipeline)
    if target == "local":
        from pathlib import PurePath

        return local_argv(pipeline, [job], Path(PurePath(props_uri.replace("file://", "")).parent), jars, job_script)
    if target not in ("emr", "emr-serverless"):
        raise ConfigError(f"unknown target {target!r}")
    if engine_for(pipeline.hudi.version, target, pipeline.hudi.engine) == HUDI_CDC:
        return hudi_cdc_aws_argv(pipeline, job, props_uri)
    refuse_shaping(pipeline, table, "HoodieStreamer on EMR")
    flags = [prof.emr_ordering_flag if f == prof.ordering_flag else f for f in streamer_flags(pipeline, job, props_uri)]
    if prof.name != "seed" and "--transformer-class" not in flags:
        # typed columns: the properties carry the transformer SQL (runners/deltastreamer/typed_render.py)
        flags[flags.index("--op"):flags.index("--op")] = ["--transformer-class", TRANSFORMER_CLASS]
    flags += async_compaction_flags(prof, job)
    flags += lock_flags(pipeline, table, table_type, prof.name)
    text = _render(prof, "spark-submit.args.j2", master=None, name=None, driver_memory=None,
                   confs=list(prof.emr_confs), jars=list(prof.emr_jars), streamer_class=prof.streamer_class,
                   app_jar=prof.emr_app_jar, streamer_flags=flags)
    return _lines(text)


# hudi-cdc's streamer on EMR / EMR Serverless: EMR's own Hudi Spark bundle and spark-avro (EMR 7 keeps
# Spark's connectors under /usr/lib/spark/connector/lib/), and a Python that has fastavro and hudi-rs
# (emr/bootstrap-hudi-cdc-job.sh installs them for python3.11; EMR 7's default python3 is 3.9, too old
# for the hudi-rs wheels).
HUDI_CDC_AWS_JARS = ("/usr/lib/hudi/hudi-spark-bundle.jar", "/usr/lib/spark/connector/lib/spark-avro.jar")
JOB_PYTHON = "/usr/bin/python3.11"
HUDI_CDC_AWS_CONFS = (f"spark.pyspark.python={JOB_PYTHON}", f"spark.pyspark.driver.python={JOB_PYTHON}")


def job_file_uris(props_uri: str) -> tuple[str, str]:
    """(job file, job zip): uploaded next to the properties files (hudi_cdc/job_package.py)."""
    root = props_uri.rsplit("/", 1)[0]
    return f"{root}/{JOB_SCRIPT_NAME}", f"{root}/{JOB_ZIP_NAME}"


def hudi_cdc_aws_argv(pipeline: Pipeline, job: Job, props_uri: str) -> list[str]:
    """spark-submit argv running hudi-cdc's streamer on EMR / EMR Serverless for one job: the job file
    as the application, the job zip as --py-files, the same streamer flags as everywhere."""
    return hudi_cdc_aws_jobs_argv(pipeline, [(job, props_uri)])


def hudi_cdc_aws_jobs_argv(pipeline: Pipeline, jobs: Sequence[tuple[Job, str]]) -> list[str]:
    """The same for several jobs in one application (flag groups joined by ``--next``): `stream --all`'s
    one EMR step, every table's job with ``all_tables``."""
    if not jobs:
        raise ConfigError("nothing to run")
    prof = profile(pipeline)
    script, zip_uri = job_file_uris(jobs[0][1])
    flags: list[str] = []
    for i, (job, props_uri) in enumerate(jobs):
        if i:
            flags.append("--next")
        flags += streamer_flags(pipeline, job, props_uri) + lock_flags(pipeline, job.table, job.table_type, prof.name)
    text = _render(prof, "spark-submit.args.j2", master=None, name=None, driver_memory=None,
                   confs=[*prof.emr_confs, *HUDI_CDC_AWS_CONFS, *as_pairs(codegen_cache_conf(len(jobs)))],
                   jars=list(HUDI_CDC_AWS_JARS), py_files=[zip_uri],
                   streamer_class=None, app_jar=script, streamer_flags=flags)
    return _lines(text)


def async_compaction_flags(prof: Profile, job: Job) -> list[str]:
    """HoodieStreamer refuses --continuous on a MERGE_ON_READ table while hoodie.compact.inline=true
    (which the properties file sets for runs that end): a continuous job compacts asynchronously."""
    if job.continuous and job.table_type == "MERGE_ON_READ" and prof.inline_compaction_in_props:
        return ["--hoodie-conf", "hoodie.compact.inline=false"]
    return []


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def real_streamer_local_argv(pipeline: Pipeline, job: Job, props_uri: str, *, spark_submit: str,
                             jars: Sequence[str], app_jar: str, extra_flags: Sequence[str] = ()) -> list[str]:
    """spark-submit argv running the profile's real HoodieStreamer/HoodieDeltaStreamer locally for one job
    (the profile's own spark-submit template; jars in class-path order)."""
    prof = profile(pipeline)
    flags = streamer_flags(pipeline, job, props_uri)
    for kv in LOCAL_HOODIE_CONF:
        flags += ["--hoodie-conf", kv]
    flags += list(extra_flags)
    text = _render(prof, "spark-submit.args.j2", master=pipeline.spark.master,
                   name=f"hudi-cdc-{pipeline.pipeline}-{job.name}", driver_memory=pipeline.spark.driver_memory,
                   confs=spark_confs_local(pipeline), jars=list(jars), streamer_class=prof.streamer_class,
                   app_jar=app_jar, streamer_flags=flags)
    argv = _lines(text)
    argv[0] = spark_submit
    return argv
