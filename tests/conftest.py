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

from pathlib import Path

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


def pytest_collection_modifyitems(config, items):
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            mark = FIXTURE_MARKS.get(fixture)
            if mark and item.get_closest_marker(mark) is None:
                item.add_marker(mark)
        if not any(item.get_closest_marker(m) for m in COMPONENT_MARKS):
            item.add_marker("unit")
