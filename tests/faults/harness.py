"""The fault suite's lake: a pipeline over one CDC topic (CoW and MoR), a seeded generator of change
files (updates, partition moves, key-only deletes, inserts, re-inserts, stale events, redeliveries),
the real `hudi-cdc` CLI as a subprocess, the timeline and checkpoint as the tables hold them, and the
exact check against `sample.replay` of every event landed."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import fastavro
import yaml

from hudi_cdc import sample
from hudi_cdc.common.instants import COMPLETED, parse_instant_file
from hudi_cdc.config import load_pipeline
from hudi_cdc.jobs.stream.table import read_checkpoint
from hudi_cdc.lake.reader import read_table

TOPIC = "moma.public.artists"
SCHEMA = sample.schema("artists")
TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
DATA_COLS = ["artist_id", "name", "nationality", "gender", "birth_year", "death_year", "__op", "__lsn", "__deleted"]
NATIONS = ["American", "French", "German", "Japanese"]
REPO = Path(__file__).resolve().parents[2]


def land_file(directory: Path, topic: str, offset: int, records: list[dict], after_ms: int) -> tuple[Path, int]:
    """One S3-sink file named for `offset`, appearing atomically (temp file, then rename), its
    modification time (returned, in ms) later than `after_ms`: the checkpoint order of landed files."""
    path = directory / sample.file_name(topic, offset)
    tmp = directory / f".{path.name}.tmp"
    with open(tmp, "wb") as fh:
        fastavro.writer(fh, SCHEMA, records)
    ms = max(int(time.time() * 1000), after_ms + 1)
    os.utime(tmp, ns=(ms * 1_000_000, ms * 1_000_000))
    os.replace(tmp, path)
    return path, ms


def ev(aid: int, lsn: int, nat: str | None = "American", name: str | None = None, op: str = "u",
       deleted: bool = False) -> dict:
    if deleted:  # Debezium's key-only delete: every other column null
        return {"artist_id": aid, "name": None, "nationality": None, "gender": None, "birth_year": None,
                "death_year": None, "__op": "d", "__db": "moma", "__table": "artists", "__schema": "public",
                "__lsn": lsn, "__source_ts_ms": lsn, "__deleted": "true"}
    return {"artist_id": aid, "name": name or f"artist {aid}", "nationality": nat, "gender": "Female",
            "birth_year": 1900 + aid % 90, "death_year": None, "__op": op, "__db": "moma", "__table": "artists",
            "__schema": "public", "__lsn": lsn, "__source_ts_ms": lsn, "__deleted": "false"}


class FaultLake:
    def __init__(self, tmp: Path, seed: int, **stream: object):
        self.tmp, self.rng = tmp, random.Random(seed)
        self.outputs: dict[str, Path] = {}  # each started stream's output file, shown when a wait fails
        self.dir = tmp / "landing" / TOPIC / "partition=0"
        self.dir.mkdir(parents=True)
        settings = {"min_sync_interval_seconds": 2, "max_restarts": 10, "restart_backoff_seconds": 1,
                    "restart_backoff_max_seconds": 4, "stop_timeout_seconds": 240}
        settings.update(stream)
        self.config = tmp / "hudi-cdc.yaml"
        self.config.write_text(yaml.safe_dump({
            "pipeline": "faults", "source": {"root": "landing"}, "lake": {"root": "lake", "hive_database": "f"},
            "spark": {"shuffle_partitions": 2, "driver_memory": "1g"}, "stream": settings,
            "tables": {"artists": {"topic": TOPIC, "record_key": "artist_id", "partition_field": "nationality",
                                   "table_types": list(TYPES), "compaction_delta_commits": 2}}}))
        self.pipeline = load_pipeline(self.config)
        self.events: list[dict] = []
        self.files: list[list[dict]] = []
        self.lsn, self.next_key, self.offset, self.last_ms = 1000, 1, 0, 0
        self._lock = threading.Lock()
        self.env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    # ---- landing -------------------------------------------------------------------------
    def land(self, records: list[dict]) -> Path:
        """One S3-sink file, appearing atomically, its modification time later than every earlier one."""
        with self._lock:
            path, self.last_ms = land_file(self.dir, TOPIC, self.offset, records, self.last_ms)
            self.offset += len(records)
            self.events.extend(records)
            self.files.append(records)
            return path

    def _lsn(self) -> int:
        self.lsn += self.rng.randint(1, 5)
        return self.lsn

    def snapshot(self, n: int = 40) -> None:
        rows = [ev(k, self._lsn(), NATIONS[k % len(NATIONS)], op="r") for k in range(1, n + 1)]
        self.next_key = n + 1
        self.land(rows)

    def change_file(self) -> Path:
        rng = self.rng
        if self.files[1:] and rng.random() < 0.15:  # Kafka Connect redelivers a whole earlier batch
            return self.land(list(rng.choice(self.files[1:])))
        state = sample.replay(self.events, "artist_id")
        live = sorted(state)
        dead = sorted({e["artist_id"] for e in self.events} - set(live))
        out: list[dict] = []
        for _ in range(rng.randint(4, 14)):
            r = rng.random()
            if r < 0.30 and live:
                k = rng.choice(live)
                out.append(ev(k, self._lsn(), state[k]["nationality"], name=f"a{k}-{self.lsn}"))
            elif r < 0.45 and live:  # partition move
                k = rng.choice(live)
                nat = rng.choice([n for n in NATIONS if n != state[k]["nationality"]])
                out.append(ev(k, self._lsn(), nat, name=f"a{k}-moved-{self.lsn}"))
            elif r < 0.58 and live:
                out.append(ev(rng.choice(live), self._lsn(), deleted=True))
            elif r < 0.70:
                k = rng.choice(dead) if dead and rng.random() < 0.3 else self._new_key()
                out.append(ev(k, self._lsn(), rng.choice(NATIONS), op="c"))
            elif r < 0.80 and live:  # stale: older than the stored row
                k = rng.choice(live)
                out.append(ev(k, max(1, state[k]["__lsn"] - rng.randint(1, 50)), rng.choice(NATIONS), name="stale"))
            elif self.events:  # one event delivered again
                out.append(dict(rng.choice(self.events)))
        if out and rng.random() < 0.3:
            out.append(dict(rng.choice(out)))  # a duplicate inside the same file
        return self.land(out or [ev(self._new_key(), self._lsn(), "French", op="c")])

    def _new_key(self) -> int:
        self.next_key += 1
        return self.next_key - 1

    def keep_landing(self, every: tuple[float, float] = (1.0, 3.0)) -> threading.Event:
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(self.rng.uniform(*every)):
                self.change_file()

        threading.Thread(target=loop, daemon=True).start()
        return stop

    # ---- the CLI ----------------------------------------------------------------------
    def cli(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "hudi_cdc.cli", "--config", str(self.config), *args],
                              cwd=self.tmp, env=self.env, capture_output=True, text=True, timeout=timeout)

    def start_stream(self, name: str) -> subprocess.Popen:
        out = open(self.tmp / f"{name}.out", "w")
        self.outputs[name] = self.tmp / f"{name}.out"
        return subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "--config", str(self.config),
                                 "stream", "--table", "artists"], cwd=self.tmp, env=self.env,
                                stdout=out, stderr=subprocess.STDOUT, text=True, start_new_session=True)

    # ---- what the tables hold ---------------------------------------------------------------
    def base(self, tt: str) -> str:
        return self.pipeline.base_path("artists", tt)

    def timeline(self, tt: str) -> list[str]:
        from tests.shared import timeline_files

        return timeline_files(self.base(tt))  # layout 1 (table version 6) or 2; [] before the table

    def dangling(self, tt: str) -> list[str]:
        """Requested/inflight instants without a completed file for the same instant."""
        parsed = [i for i in (parse_instant_file(n) for n in self.timeline(tt)) if i]
        done = {i.requested_time for i in parsed if i.state == COMPLETED}
        return sorted(i.file_name for i in parsed if i.state != COMPLETED and i.requested_time not in done)

    def checkpoint(self, tt: str) -> str | None:
        return read_checkpoint(self.base(tt))

    def caught_up(self) -> bool:
        want = str(self.last_ms)
        return all(self.checkpoint(tt) == want for tt in TYPES)

    def wait_caught_up(self, proc: subprocess.Popen, timeout: float) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"stream exited ({proc.returncode}) before catching up")
            try:
                if self.caught_up():
                    return
            except Exception:  # a timeline being written
                pass
            time.sleep(1)
        tails = "".join(f"\n--- {name}.out:\n" + path.read_text(errors="replace")[-3000:]
                        for name, path in self.outputs.items())
        raise AssertionError(f"not caught up after {timeout}s: {[self.checkpoint(t) for t in TYPES]} vs "
                             f"{self.last_ms}{tails}")

    def assert_exact(self) -> None:
        want = {k: {c: v[c] for c in DATA_COLS} for k, v in sample.replay(self.events, "artist_id").items()}
        for tt in TYPES:
            rows = read_table(self.base(tt))
            keys = [r["artist_id"] for r in rows]
            dupes = sorted({k for k in keys if keys.count(k) > 1})
            assert not dupes, f"{tt}: keys twice: {dupes}"
            got = {r["artist_id"]: {c: r[c] for c in DATA_COLS} for r in rows}
            missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
            wrong = sorted(k for k in set(want) & set(got) if want[k] != got[k])
            assert not (missing or extra or wrong), \
                f"{tt}: missing {missing[:5]}, extra {extra[:5]}, differing {[(k, want[k], got[k]) for k in wrong[:2]]}"
            parts = {r["artist_id"]: r["_hoodie_partition_path"] for r in rows}
            assert all(parts[k] == f"nationality={want[k]['nationality']}" for k in want), f"{tt}: partition paths"


def job_pids(pid: int) -> list[int]:
    """The spark-submit JVM(s) a hudi-cdc process started."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def gone(pid: int, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not Path(f"/proc/{pid}").exists() or "State:\tZ" in _status(pid):
            return True
        time.sleep(0.2)
    return False


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""
