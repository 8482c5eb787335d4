"""Version profiles: what differs between the seed's Hudi 0.9.0 on EMR 6.5, Hudi 0.14.0 on EMR 6.15
and current Hudi.

A profile picks the template folder, the streamer class, key prefixes, flags and jar locations.
Every key and flag rendered from these profiles is checked against Hudi's own source in
tests/core/test_hudi_keys.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_cdc.common.spark_conf import HUDI_EXTENSION_CONF, as_pairs
from hudi_cdc.config.settings import CURRENT_HUDI, SEED_HUDI, V014_HUDI
from hudi_cdc.errors import ConfigError


@dataclass(frozen=True)
class Profile:
    name: str
    hudi_version: str
    template_dir: str
    streamer_class: str
    key_prefix: str  # hoodie.streamer. | hoodie.deltastreamer.
    ordering_flag: str  # --source-ordering-fields | --source-ordering-field
    props_file_pattern: str
    emr_release: str
    emr_jars: tuple[str, ...]  # --jars on EMR
    emr_app_jar: str  # the jar holding the streamer class on EMR
    emr_confs: tuple[str, ...]
    emr_ordering_flag: str = "--source-ordering-field"
    # --payload-class, when the release needs it on the command line: HoodieStreamer's default
    # (OverwriteWithLatestAvroPayload) is used for the incoming records whatever the properties say.
    payload_class: str = ""
    # The source schema provider when no registry is set: AvroDFSSource needs one in 0.14 (it reads
    # the files with the provider's source schema), and the target schema carries _hoodie_is_deleted.
    file_schema_provider: str = ""
    # the properties file sets hoodie.compact.inline=true for MoR (right for runs that end; a
    # --continuous HoodieStreamer compacts asynchronously and refuses it: StreamSync's write-config check)
    inline_compaction_in_props: bool = False


SEED = Profile(
    name="seed",
    hudi_version=SEED_HUDI,
    template_dir="seed",
    streamer_class="org.apache.hudi.utilities.deltastreamer.HoodieDeltaStreamer",
    key_prefix="hoodie.deltastreamer.",
    ordering_flag="--source-ordering-field",
    props_file_pattern="deltastreamer_{table}_{registry}{suffix}.properties",
    emr_release="emr-6.5.0",
    emr_jars=("/usr/lib/spark/jars/spark-avro.jar", "/usr/lib/hudi/hudi-utilities-bundle.jar"),
    emr_app_jar="/usr/lib/hudi/hudi-utilities-bundle.jar",
    emr_confs=("spark.sql.catalogImplementation=hive",),
)

CURRENT = Profile(
    name="current",
    hudi_version=CURRENT_HUDI,
    template_dir="current",
    streamer_class="org.apache.hudi.utilities.streamer.HoodieStreamer",
    key_prefix="hoodie.streamer.",
    ordering_flag="--source-ordering-fields",
    props_file_pattern="{table}_{suffix}.properties",
    # emr-7.12.0 ships Hudi 1.0.2-amzn-1: its jars are /usr/lib/hudi/hudi-{spark,utilities}-bundle.jar,
    # and its HoodieStreamer knows only the singular --source-ordering-field (an alias in 1.1+).
    emr_release="emr-7.12.0",
    emr_jars=("/usr/lib/hudi/hudi-spark-bundle.jar",),
    emr_app_jar="/usr/lib/hudi/hudi-utilities-bundle.jar",
    emr_confs=(
        "spark.sql.catalogImplementation=hive",
        *as_pairs(HUDI_EXTENSION_CONF),
    ),
    inline_compaction_in_props=True,
)


# Hudi 0.14.0 (EMR 6.15): HoodieDeltaStreamer, one ordering field, DefaultHoodieRecordPayload on the
# command line; its real streamer runs locally too (hudi_cdc/runners/deltastreamer).
V014 = Profile(
    name="v014",
    hudi_version=V014_HUDI,
    template_dir="v014",
    streamer_class="org.apache.hudi.utilities.deltastreamer.HoodieDeltaStreamer",
    key_prefix="hoodie.streamer.",  # 0.14 reads hoodie.streamer.* first, hoodie.deltastreamer.* as alternatives
    ordering_flag="--source-ordering-field",
    props_file_pattern="{table}_{suffix}.properties",
    emr_release="emr-6.15.0",
    emr_jars=("/usr/lib/hudi/hudi-spark-bundle.jar",),
    emr_app_jar="/usr/lib/hudi/hudi-utilities-bundle.jar",
    emr_confs=CURRENT.emr_confs,
    payload_class="org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    file_schema_provider="org.apache.hudi.utilities.schema.FilebasedSchemaProvider",
)

_BY_VERSION = {SEED_HUDI: SEED, V014_HUDI: V014}


def profile_for(version: str) -> Profile:
    return _BY_VERSION.get(version, CURRENT)


HOODIESTREAMER, HUDI_CDC = "hoodiestreamer", "hudi-cdc"
# Which engines run a profile's jobs locally on this project's machine: Maven Central serves no
# Hudi 1.x utilities bundle (so no HoodieStreamer 1.x) and no Hudi 0.9.0 Spark 3 bundle.
LOCAL_ENGINES = {CURRENT_HUDI: (HUDI_CDC,), V014_HUDI: (HOODIESTREAMER,), SEED_HUDI: ()}
_WHY_NOT_LOCAL = {
    CURRENT_HUDI: "Maven Central serves no Hudi 1.x utilities bundle, so HoodieStreamer 1.x cannot run here",
    V014_HUDI: "hudi-cdc's streamer runs on the Hudi 1.2.0 Spark bundle only",
    SEED_HUDI: "no Hudi 0.9.0 bundle runs on this project's Spark",
}


# Which engines run a profile's jobs on EMR / EMR Serverless: the real HoodieStreamer always; hudi-cdc's
# streamer (spark-submit of jobs/streamer.py, --py-files the job zip, EMR's Hudi Spark bundle) only on
# the EMR 7 profile: the job needs Python 3.10+ (hudi-rs wheels), EMR 6.x runs Python 3.7.
# The first engine of a profile is its default: hudi-cdc's streamer on EMR 7 (the tombstones, redelivery
# and delete-block guarantees live there), HoodieStreamer stays selectable with hudi.engine.
AWS_ENGINES = {CURRENT_HUDI: (HUDI_CDC, HOODIESTREAMER), V014_HUDI: (HOODIESTREAMER,), SEED_HUDI: (HOODIESTREAMER,)}


def engine_for(version: str, target: str, chosen: str | None = None) -> str:
    """The engine that runs a pipeline's jobs on a target; ConfigError (one line) when none can."""
    if target != "local":
        possible = AWS_ENGINES.get(version, (HOODIESTREAMER, HUDI_CDC))
        if chosen is not None and chosen not in possible:
            release = profile_for(version).emr_release
            raise ConfigError(f"hudi.engine {chosen} cannot run on {target} for hudi.version {version}: its EMR "
                              f"release ({release}) runs Python 3.7, and hudi-cdc's streamer needs Python 3.10+ "
                              f"(hudi-rs); use hudi.engine {HOODIESTREAMER} there, or hudi.version {CURRENT_HUDI}")
        return chosen or possible[0]
    possible = LOCAL_ENGINES.get(version, (HUDI_CDC,))
    if not possible:
        raise ConfigError(f"hudi.version {version} (the seed's EMR 6.5 profile) cannot run locally: "
                          f"{_WHY_NOT_LOCAL[version]}; render it for EMR (--target emr) or use hudi.version "
                          f"{V014_HUDI} (real HoodieDeltaStreamer) or {CURRENT_HUDI} (hudi-cdc streamer) locally")
    if chosen is not None and chosen not in possible:
        raise ConfigError(f"hudi.engine {chosen} cannot run locally for hudi.version {version}: "
                          f"{_WHY_NOT_LOCAL[version]}; use hudi.engine {possible[0]}")
    return chosen or possible[0]
