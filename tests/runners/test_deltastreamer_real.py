"""The REAL HoodieDeltaStreamer 0.14.0 (hudi-utilities_2.12:0.14.0 on pyspark 3.4.3) run locally on what
hudi-cdc renders for hudi.version "0.14.0", read back with hudi-rs and compared with the state
replayed independently from the landed events (hudi_cdc.sample.replay). Its CDC semantics round after
round, and status and the JVM-free readers on its tables, are proven in test_engines_differential.py
on the same rounds that compare it with hudi-cdc's streamer.

Needs the runtime prepared by scripts/install-deltastreamer.sh (skipped otherwise). Every job is
one spark-submit (a JVM), so these tests are slow: run this file on its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc import pipeline as pipe
from hudi_cdc import sample
from hudi_cdc.config import parse_pipeline, uri_to_path
from hudi_cdc.core import render
from hudi_cdc.lake.reader import read_table, rows_by_key
from hudi_cdc.runners.deltastreamer import runtime, submit
from tests.shared import require

pytestmark = [pytest.mark.spark, pytest.mark.deltastreamer]


@pytest.fixture(autouse=True)
def _deltastreamer_runtime():
    require(runtime.is_ready(), "no HoodieDeltaStreamer 0.14.0 runtime: run scripts/install-deltastreamer.sh")

TOPIC = "moma.public.artists"
SCHEMA = sample.schema("artists")
DATA_COLS = ["artist_id", "name", "nationality", "gender", "birth_year", "death_year", "__op", "__lsn", "__deleted"]
BOTH = ("COPY_ON_WRITE", "MERGE_ON_READ")


def ev(aid, lsn, nat="American", name=None, by=1900, op="u", deleted=False):
    if deleted:  # key-only: Debezium's rewritten delete carries nulls, also in the partition field
        return {"artist_id": aid, "name": None, "nationality": None, "gender": None, "birth_year": None,
                "death_year": None, "__op": "d", "__db": "moma", "__table": "artists", "__schema": "public",
                "__lsn": lsn, "__source_ts_ms": lsn, "__deleted": "true"}
    return {"artist_id": aid, "name": name or f"artist {aid}", "nationality": nat, "gender": "Male",
            "birth_year": by, "death_year": None, "__op": op, "__db": "moma", "__table": "artists",
            "__schema": "public", "__lsn": lsn, "__source_ts_ms": lsn, "__deleted": "false"}


SNAPSHOT = [ev(i, 100, nat=["American", "French", "German"][i % 3], op="r") for i in range(1, 31)]


class Lake:
    """A landing folder and a 0.14.0 pipeline over it; rounds run through the real streamer."""

    def __init__(self, tmp: Path, types=BOTH, compaction=3, source_limit=None, **table):
        self.root = tmp / "landing"
        self.dir = self.root / TOPIC / "partition=0"
        self.dir.mkdir(parents=True)
        stream = {"min_sync_interval_seconds": 0}
        if source_limit:
            stream["source_limit"] = source_limit
        self.config = str(tmp / "test.yaml")
        self.data = {
            "pipeline": "t", "hudi": {"version": "0.14.0"},
            "source": {"root": str(self.root)},
            "lake": {"root": str(tmp / "lake"), "hive_database": "t"},
            "spark": {"shuffle_partitions": 2}, "stream": stream,
            "tables": {"artists": {"topic": TOPIC, "record_key": "artist_id", "ordering_field": "__lsn",
                                   "partition_field": "nationality", "table_types": list(types),
                                   "compaction_delta_commits": compaction, **table}},
        }
        self.pipeline = parse_pipeline(self.data, "test.yaml", str(tmp))
        Path(self.config).write_text(yaml.safe_dump(self.data))  # for the CLI: --config
        self.types = types
        self.events = []
        self.offset = 0
        self.mtime_ns = 1_700_000_000_000 * 1_000_000

    def land(self, records):
        path = self.dir / sample.file_name(TOPIC, self.offset)
        with open(path, "wb") as fh:
            fastavro.writer(fh, SCHEMA, records)
        self.mtime_ns += 1_000_000_000
        os.utime(path, ns=(self.mtime_ns, self.mtime_ns))
        self.offset += len(records)
        self.events.extend(records)
        return path

    def run(self, op, continuous=False, **kw):
        """Bootstrap and --once rounds go the way `hudi-cdc bootstrap` / `hudi-cdc stream --once` do
        (pipeline.bootstrap/stream -> the local runner -> its hoodiestreamer engine); a continuous
        job is bounded (NoNewDataTerminationStrategy) through the engine's submit.run_jobs."""
        quiet = lambda m: None  # noqa: E731
        if not continuous and not kw:
            if op == "BULK_INSERT":
                return pipe.bootstrap(self.pipeline, "artists", progress=quiet)
            return pipe.stream(self.pipeline, "artists", once=True, progress=quiet)
        jobs = [render.Job("artists", tt, op, continuous) for tt in self.types]
        return submit.run_jobs(self.pipeline, jobs, op.lower(), progress=quiet, **kw)

    def base(self, tt):
        return uri_to_path(self.pipeline.base_path("artists", tt))

    def table(self, tt):
        rows = read_table(self.pipeline.base_path("artists", tt))
        return {k: {c: v[c] for c in DATA_COLS} for k, v in rows_by_key(rows, "artist_id").items()}

    def expected(self):
        return {k: {c: v[c] for c in DATA_COLS} for k, v in sample.replay(self.events, "artist_id").items()}

    def assert_matches(self):
        want = self.expected()
        for tt in self.types:
            got = self.table(tt)
            diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            assert not diff, f"{tt}: keys {diff[:5]} differ from the replayed events: " \
                             f"{[(got.get(k), want.get(k)) for k in diff[:2]]}"


def test_moma_sample_bootstrap_then_changes(tmp_path):
    """The embedded MoMA sample (artworks): snapshot files -> bootstrap, the seed's changes -> one round
    (rounds after rounds, checkpoints and CDC semantics: tests/runners/test_engines_differential.py)."""
    root = tmp_path / "landing"
    sample.land_snapshot(root, tables=("artworks",))
    pipeline = parse_pipeline({
        "pipeline": "moma", "hudi": {"version": "0.14.0"}, "source": {"root": str(root)},
        "lake": {"root": str(tmp_path / "lake"), "hive_database": "moma"}, "spark": {"shuffle_partitions": 2},
        "tables": {"artworks": {"topic": sample.TOPICS["artworks"], "record_key": "artwork_id",
                                "ordering_field": "__lsn", "partition_field": "classification"}},
    }, "hudi-cdc.yaml", str(tmp_path))
    def jobs(op):
        return [render.Job("artworks", tt, op) for tt in BOTH]

    submit.run_jobs(pipeline, jobs("BULK_INSERT"), "bootstrap", progress=lambda m: None)
    changes = [c for c in sample.change_files() if c.table == "artworks"]
    sample.land_changes(root, count=len(sample.pending_changes(root)))
    submit.run_jobs(pipeline, jobs("UPSERT"), "stream", progress=lambda m: None)
    assert changes and not sample.pending_changes(root)
    want = sample.expected_state(root, "artworks")
    for tt in BOTH:
        got = rows_by_key(read_table(pipeline.base_path("artworks", tt)), "artwork_id")
        assert set(got) == set(want), tt
        bad = [k for k in want if any(got[k][c] != want[k][c] for c in want[k])]
        assert not bad, f"{tt}: {len(bad)} rows differ, e.g. {bad[:3]}"


def test_continuous_mor_compacts_asynchronously(tmp_path):
    """--continuous MoR: one file per sync round (source limit), async compaction after 2 delta
    commits (0.14 refuses hoodie.compact.inline=true here), ended by NoNewDataTerminationStrategy."""
    lake = Lake(tmp_path, types=("MERGE_ON_READ",), compaction=2)
    lake.land(SNAPSHOT[:10])
    lake.run("BULK_INSERT")
    files = [lake.land([ev(i, 200 + i, name=f"round {i}")]) for i in (1, 2, 3, 4)]
    size = max(f.stat().st_size for f in files)
    lake = _with_source_limit(lake, size + size // 2)  # more than one file, less than two
    res = lake.run("UPSERT", continuous=True, idle_rounds=2, timeout_seconds=900)
    made = res[0]["instants"]
    assert sum(i.endswith(".deltacommit") for i in made) == 4, made
    assert any(i.endswith(".commit") for i in made), f"no compaction completed: {made}"
    assert res[0]["checkpoint"] == str(files[-1].stat().st_mtime_ns // 1_000_000)
    lake.assert_matches()
    ro = rows_by_key(read_table(lake.pipeline.base_path("artists", "MERGE_ON_READ"), read_optimized=True),
                     "artist_id")
    assert ro[1]["name"].startswith("round"), "the read-optimized view shows no compacted change"


def _with_source_limit(lake: Lake, limit: int) -> Lake:
    data = lake.pipeline.model_dump()
    data["stream"]["source_limit"] = limit
    lake.pipeline = parse_pipeline(data, lake.pipeline.source_file, lake.pipeline.base_dir)
    return lake


def _jvms_under(marker: str) -> list[int]:
    """Pids of the java processes whose command line names `marker` (this test's folder)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"java") and any(marker.encode() in a for a in argv):
            out.append(int(pid))
    return out


def _running(pid: int) -> bool:
    """Is the process there and not a zombie (it has ended but not been reaped yet)?"""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _holds(pid: int, path: Path) -> bool:
    """Does the process have `path` open (the inherited table lock)?"""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def test_a_killed_hudi_cdc_takes_its_014_jvm_with_it(tmp_path):
    """`hudi-cdc stream` (continuous, the 0.14 engine) started as a user would: its JVM holds the
    table lock it inherited; kill -9 of hudi-cdc ends the JVM too (PR_SET_PDEATHSIG), so the lock
    is free only when nothing writes the table any more."""
    import signal
    import subprocess
    import sys
    import time

    from hudi_cdc.core import lock

    lake = Lake(tmp_path, types=("MERGE_ON_READ",))
    lake.land(SNAPSHOT[:10])
    lake.run("BULK_INSERT")
    lock_file = lock.lock_path(lake.pipeline, "artists", "MERGE_ON_READ")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    cli = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "--config", lake.config, "stream", "--table",
                            "artists", "--type", "mor"], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        jvm = None
        deadline = time.monotonic() + 300  # bounded wait for the JVM to start, not a timing assert
        while jvm is None and time.monotonic() < deadline and cli.poll() is None:
            found = [p for p in _jvms_under(str(tmp_path)) if _holds(p, lock_file)]
            jvm = found[0] if found else None
            time.sleep(1)
        assert jvm is not None, "no HoodieDeltaStreamer JVM holding the table lock appeared"
        assert lock.probe(lake.pipeline, "artists", "MERGE_ON_READ").held
        cli.send_signal(signal.SIGKILL)
        cli.wait(60)
        # bounded wait: a dying process drops its memory (and command line) before its files
        deadline = time.monotonic() + 120
        while (_running(jvm) or lock.probe(lake.pipeline, "artists", "MERGE_ON_READ").held) \
                and time.monotonic() < deadline:
            time.sleep(1)
        assert not _running(jvm), "the JVM outlived the killed hudi-cdc"
        assert not lock.probe(lake.pipeline, "artists", "MERGE_ON_READ").held
    finally:
        if cli.poll() is None:
            cli.kill()
        for pid in _jvms_under(str(tmp_path)):  # never leave a JVM behind, whatever failed
            os.kill(pid, signal.SIGKILL)
