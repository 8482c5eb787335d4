"""`inspect stats`: write amplification as hudi-cli's `stats wa` defines it, and file-size figures.

hudi-cli (StatsCommand.writeAmplificationStats, and the Spark procedure stats_wa) walks the completed
commit and replacecommit instants (not deltacommits) and per instant divides records written
(sum of numWrites) by records upserted (sum of numUpdateWrites), as a float, printed with
DecimalFormat("#.00"); "0" when nothing was upserted. A "Total" row does the same over all instants.
File sizes follow `stats filesizes` (a codahale uniform snapshot: min, 10th, median, mean, 95th, max,
count, standard deviation), over the files of the latest file slices.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

from hudi_cdc.inspect.commits import require_commits
from hudi_cdc.lake.metadata import commit_metadata, write_totals
from hudi_cdc.lake.table import Table, hudi_rs_errors
from hudi_cdc.lake.timeline import read_timeline

WA_ACTIONS = ("commit", "replacecommit")  # getCommitAndReplaceTimeline (clustering completes as replacecommit)


def _float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def hudi_waf(written: int, upserted: int) -> str:
    """The write amplification text exactly as hudi-cli prints it."""
    if upserted <= 0:
        return "0"
    value = _float32(_float32(float(written)) / _float32(float(upserted)))
    text = f"{value:.2f}"  # DecimalFormat("#.00"), HALF_EVEN on the exact binary value
    return text[1:] if text.startswith("0.") else text


@hudi_rs_errors
def write_amplification(table: Table) -> list[dict[str, object]]:
    """Rows like `stats wa` (oldest first) plus a final row with requested_time "Total"; each row also
    carries the bytes those instants wrote (sum of totalWriteBytes), which hudi-cli does not show."""
    timeline = read_timeline(table)
    require_commits(table, [i for i in timeline if i.is_completed])
    instants = [i for i in timeline if i.is_completed and i.action in WA_ACTIONS]
    rows: list[dict[str, object]] = []
    total_up, total_written, total_bytes = 0, 0, 0
    for inst, meta in zip(instants, commit_metadata(table, instants), strict=True):
        totals = write_totals(meta)
        upserted, written, written_bytes = totals["updated"], totals["written"], totals["bytes"]
        total_up += upserted
        total_written += written
        total_bytes += written_bytes
        rows.append({"requested_time": inst.requested_time, "completion_time": inst.completion_time,
                     "action": inst.action, "records_upserted": upserted, "records_written": written,
                     "write_amplification": hudi_waf(written, upserted), "bytes_written": written_bytes})
    rows.append({"requested_time": "Total", "completion_time": None, "action": None,
                 "records_upserted": total_up, "records_written": total_written,
                 "write_amplification": hudi_waf(total_written, total_up), "bytes_written": total_bytes})
    return rows


def size_summary(sizes: Sequence[int]) -> dict[str, float | None]:
    """min, 10th, 50th, avg, 95th, max, count, std_dev, total as codahale's UniformSnapshot computes them."""
    values = sorted(sizes)
    n = len(values)

    def quantile(q: float) -> float | None:
        if n == 0:
            return None
        pos = q * (n + 1)
        if pos < 1:
            return float(values[0])
        if pos >= n:
            return float(values[-1])
        lower, upper = values[int(pos) - 1], values[int(pos)]
        return lower + (pos - math.floor(pos)) * (upper - lower)

    mean = sum(values) / n if n else None
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 and mean is not None else 0.0
    return {"files": n, "total_bytes": sum(values), "min": values[0] if n else None, "p10": quantile(0.1),
            "p50": quantile(0.5), "avg": mean, "p95": quantile(0.95), "max": values[-1] if n else None,
            "std_dev": std}


@hudi_rs_errors
def file_size_stats(table: Table) -> dict[str, dict[str, float | None]]:
    """File-size figures over the latest file slices: base files, log files and all files."""
    require_commits(table, [i for i in read_timeline(table) if i.is_completed])
    base: list[int] = []
    logs: list[int] = []
    for fs in table.hudi.get_file_slices():
        if fs.base_file_name:
            base.append(int(fs.base_file_size))
        logs.extend(int(s) for s in fs.log_file_sizes)
    return {"base_files": size_summary(base), "log_files": size_summary(logs), "all_files": size_summary(base + logs)}
