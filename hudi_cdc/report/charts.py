"""The report's charts, drawn as inline SVG by hudi_cdc.report.svg (glyphs as paths, so the page needs
no fonts, scripts or network): records per commit, freshness, file sizes, MoR log growth."""

from __future__ import annotations

from datetime import datetime, timezone

from hudi_cdc.report.data import TableReport
from hudi_cdc.report.svg import Chart, Glyphs

COLORS = {"inserted": "#2e7d32", "updated": "#1565c0", "deleted": "#c62828", "log": "#ef6c00",
          "base": "#546e7a", "fresh": "#6a1b9a", "compaction": "#00838f"}


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%m-%d %H:%M:%S")


def commits_chart(r: TableReport, g: Glyphs) -> str:
    """Records inserted, updated and deleted per write, oldest first; a compaction is a dotted line
    (it rewrites records, it does not change them)."""
    ch = Chart(g, "Records per commit (inserted / updated / deleted)")
    c = r.commits
    if not c:
        ch.empty("no completed commits")
        return ch.svg()
    totals = [0 if p.compaction else p.inserted + p.updated + p.deleted for p in c]
    nonzero = sorted(b for b in totals if b)
    symlog = bool(nonzero) and nonzero[-1] > 50 * nonzero[len(nonzero) // 2]  # a bootstrap beside small rounds
    ch.categories(len(c))
    ch.y_range(max(totals) * (1.15 if not symlog else 1.0), integer=True, symlog=symlog,
               label="records (log scale)" if symlog else "records")
    for i, p in enumerate(c):
        if p.compaction:
            ch.vline(i, COLORS["compaction"], 1.0)
            continue
        bottom = 0
        for kind in ("inserted", "updated", "deleted"):
            v = getattr(p, kind)
            ch.bar(i - 0.35, i + 0.35, bottom, bottom + v, COLORS[kind])
            bottom += v
        if bottom:
            ch.text(f"{bottom:,}", ch.px(i), ch.py(bottom) - 3, 9.3, "middle")
    ch.x_labels([_when(p.at) for p in c])
    ch.legend([(k, COLORS[k]) for k in ("inserted", "updated", "deleted")])
    return ch.svg()


def _unit(seconds: float) -> tuple[str, float]:
    """The unit a span reads best in: seconds, minutes, hours or days."""
    for name, per in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= 2 * per:
            return name, per
    return "seconds", 1.0


def freshness_chart(r: TableReport, g: Glyphs) -> str:
    """Freshness at each commit: its time minus the newest source event time it applied."""
    ch = Chart(g, "Freshness at each commit (commit time - newest source event applied)")
    points = [(p.at, p.freshness_seconds) for p in r.commits if p.freshness_seconds is not None]
    if not points:
        ch.empty("no source event times in the commit metadata (written by hudi-cdc's streamer)")
        return ch.svg()
    unit, per = _unit(max(f for _, f in points))
    values = [max(0.0, f / per) for _, f in points]
    ch.categories(len(points))
    ch.y_range(max(values), label=unit)
    ch.polyline(list(range(len(points))), values, COLORS["fresh"], marker=3)
    ch.x_labels([_when(t) for t, _ in points])
    return ch.svg()


def _bins(values: list[float], n: int) -> list[float]:
    lo, hi = min(values), max(values)
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    return [lo + (hi - lo) * i / n for i in range(n + 1)]


def _counts(values: list[float], edges: list[float]) -> list[int]:
    n = len(edges) - 1
    out = [0] * n
    for v in values:
        i = int((v - edges[0]) / (edges[-1] - edges[0]) * n)
        out[min(n - 1, max(0, i))] += 1
    return out


def file_sizes_chart(r: TableReport, g: Glyphs) -> str:
    """How the latest file slices' base and log files spread over sizes (a stacked histogram)."""
    ch = Chart(g, "File sizes of the latest file slices")
    if not r.file_sizes:
        ch.empty("no files")
        return ch.svg()
    base = [s / 1024 for s in r.base_file_sizes]
    log = [s / 1024 for s in r.log_file_sizes]
    edges = _bins(base + log, min(20, max(5, len(r.file_sizes))))
    cb, cl = _counts(base, edges), _counts(log, edges)
    ch.x_linear(edges[0], edges[-1], "KiB")
    ch.y_range(max(a + b for a, b in zip(cb, cl, strict=True)) * 1.1, integer=True, label="files")
    for i in range(len(cb)):
        ch.bar(edges[i], edges[i + 1], 0, cb[i], COLORS["base"])
        ch.bar(edges[i], edges[i + 1], cb[i], cb[i] + cl[i], COLORS["log"])
    ch.legend([(f"base files ({len(base)})", COLORS["base"]), (f"log files ({len(log)})", COLORS["log"])])
    return ch.svg()


def log_growth_chart(r: TableReport, g: Glyphs) -> str:
    """MoR: bytes appended to log files per delta commit and their running sum since the last
    compaction (reset by each completed compaction, drawn as a dotted line)."""
    ch = Chart(g, "Log growth and compactions (MoR)")
    c = r.commits
    if not c:
        ch.empty("no completed commits")
        return ch.svg()
    running, since = 0, []
    for p in c:
        running = 0 if p.compaction else running + p.log_bytes
        since.append(running / 1024)
    written = [p.log_bytes / 1024 for p in c]
    ch.categories(len(c))
    ch.y_range(max(since + written) * 1.05, label="KiB")
    for i, p in enumerate(c):
        ch.bar(i - 0.35, i + 0.35, 0, written[i], COLORS["log"])
        if p.compaction:
            ch.vline(i, COLORS["compaction"], 1.5)
    ch.polyline(list(range(len(c))), since, "#333", marker=2)
    ch.x_labels([_when(p.at) for p in c])
    ch.legend([("log KiB written", COLORS["log"]), ("log KiB since last compaction", "#333")])
    return ch.svg()


def table_charts(r: TableReport, glyphs: Glyphs) -> dict[str, str]:
    """name -> inline SVG, in page order (their glyphs: `glyphs.defs()`, once on the page)."""
    charts = {"commits": commits_chart(r, glyphs), "freshness": freshness_chart(r, glyphs),
              "file-sizes": file_sizes_chart(r, glyphs)}
    if r.is_mor:
        charts["log-growth"] = log_growth_chart(r, glyphs)
    return charts
