"""HoodieStreamer's flags, one group per target, groups separated by `--next`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Target:
    props: str
    table_type: str
    target_base_path: str
    target_table: str
    op: str = "UPSERT"
    source_ordering_fields: str | None = None
    filter_dupes: bool = False
    enable_sync: bool = False
    continuous: bool = False
    min_sync_interval_seconds: int = 0
    source_limit: int = sys.maxsize
    max_rounds: int | None = None  # for tests of continuous mode
    hoodie_conf: list[str] = field(default_factory=list)  # key=value overrides, as HoodieStreamer's --hoodie-conf
    # `stream --all` (loops.py): every target scheduled in one application; a failing one backs off alone
    all_tables: bool = False
    retry_backoff_seconds: float = 5.0
    retry_backoff_max_seconds: float = 300.0
    max_failures: int = 5
    failure_window_seconds: float = 3600.0
    max_parallel_rounds: int = 0  # 0: from the cores (schedule.parallel_rounds)
    align_cuts: bool = True  # `stream --all`: rounds aligned on capture's cuts (aligned.py)
    status_dir: str | None = None
    # the newest transaction cut a round may end on (cuts.py): a --once run of several tables pins the newest at
    # its start for all of them (main.run_each), so they end on one cut: a consistent point. Not an argument
    cut_ceiling: int | None = None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hudi-cdc-streamer", add_help=False)
    p.add_argument("--props", required=True)
    p.add_argument("--table-type", required=True, choices=["COPY_ON_WRITE", "MERGE_ON_READ"])
    p.add_argument("--target-base-path", required=True)
    p.add_argument("--target-table", required=True)
    p.add_argument("--op", default="UPSERT", choices=["UPSERT", "INSERT", "BULK_INSERT"])
    p.add_argument("--source-ordering-fields", "--source-ordering-field", dest="source_ordering_fields")
    p.add_argument("--source-class", default=None)  # accepted for argv parity; DFS Avro only
    p.add_argument("--schemaprovider-class", default=None)
    p.add_argument("--transformer-class", default=None)
    p.add_argument("--filter-dupes", action="store_true")
    p.add_argument("--enable-sync", action="store_true")
    p.add_argument("--continuous", action="store_true")
    p.add_argument("--min-sync-interval-seconds", type=int, default=0)
    p.add_argument("--source-limit", type=int, default=sys.maxsize)
    p.add_argument("--max-rounds", type=int, default=None)
    p.add_argument("--hoodie-conf", action="append", default=[])
    p.add_argument("--all-tables", action="store_true")
    p.add_argument("--retry-backoff-seconds", type=float, default=5.0)
    p.add_argument("--retry-backoff-max-seconds", type=float, default=300.0)
    p.add_argument("--max-failures", type=int, default=5)
    p.add_argument("--failure-window-seconds", type=float, default=3600.0)
    p.add_argument("--max-parallel-rounds", type=int, default=0)
    p.add_argument("--no-align-cuts", action="store_true")
    p.add_argument("--status-dir", default=None)
    return p


def parse_argv(argv: Sequence[str]) -> list[Target]:
    """One or more HoodieStreamer-style flag groups, separated by `--next` (SystemExit when bad)."""
    groups: list[list[str]] = [[]]
    for a in argv:
        if a == "--next":
            groups.append([])
        else:
            groups[-1].append(a)
    p = _parser()
    out = []
    for g in groups:
        ns = p.parse_args(g)
        out.append(Target(
            props=ns.props, table_type=ns.table_type, target_base_path=ns.target_base_path.rstrip("/"),
            target_table=ns.target_table, op=ns.op, source_ordering_fields=ns.source_ordering_fields,
            filter_dupes=ns.filter_dupes, enable_sync=ns.enable_sync, continuous=ns.continuous,
            min_sync_interval_seconds=ns.min_sync_interval_seconds, source_limit=ns.source_limit,
            max_rounds=ns.max_rounds, hoodie_conf=list(ns.hoodie_conf), all_tables=ns.all_tables,
            retry_backoff_seconds=ns.retry_backoff_seconds, retry_backoff_max_seconds=ns.retry_backoff_max_seconds,
            max_failures=ns.max_failures, failure_window_seconds=ns.failure_window_seconds,
            max_parallel_rounds=ns.max_parallel_rounds, status_dir=ns.status_dir, align_cuts=not ns.no_align_cuts,
        ))
    return out
