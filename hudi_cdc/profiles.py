"""Version profiles: what differs between the seed's Hudi 0.9.0 on EMR 6.5 and current Hudi.

A profile picks the template folder, the streamer class, key prefixes, flags and jar locations.
Every key and flag rendered from these profiles is checked against Hudi's own source in
tests/test_hudi_keys.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import CURRENT_HUDI, SEED_HUDI
from .spark_conf import HUDI_EXTENSION_CONF, as_pairs


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
)


def profile_for(version: str) -> Profile:
    return SEED if version == SEED_HUDI else CURRENT
