"""The report's charts: matplotlib figures rendered to inline SVG (glyphs as paths, so the page needs
no fonts, scripts or network). Built on ``matplotlib.figure.Figure`` directly: no pyplot, no GUI
backend, nothing global."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from hudi_cdc.report.data import TableReport

COLORS = {"inserted": "#2e7d32", "updated": "#1565c0", "deleted": "#c62828", "log": "#ef6c00",
          "base": "#546e7a", "fresh": "#6a1b9a", "compaction": "#00838f"}
SIZE = (7.2, 2.8)


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and doctype: the SVG goes inline in HTML


def _figure(title: str) -> tuple[Figure, Axes]:
    fig = Figure(figsize=SIZE, dpi=96)
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=10, loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=8)
    return fig, ax


def _empty(ax: Axes, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=9, color="#777", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%m-%d %H:%M:%S")


def _ticks(ax: Axes, labels: list[str]) -> None:
    step = max(1, len(labels) // 12)
    ax.set_xticks(range(0, len(labels), step))
    ax.set_xticklabels(labels[::step], rotation=30, ha="right", fontsize=7)


def commits_chart(r: TableReport) -> str:
    """Records inserted, updated and deleted per write, oldest first; a compaction is a dotted line
    (it rewrites records, it does not change them)."""
    fig, ax = _figure("Records per commit (inserted / updated / deleted)")
    c = r.commits
    if not c:
        _empty(ax, "no completed commits")
        return _svg(fig)
    x = list(range(len(c)))
    bottom = [0] * len(c)
    for kind in ("inserted", "updated", "deleted"):
        values = [0 if p.compaction else getattr(p, kind) for p in c]
        ax.bar(x, values, bottom=bottom, color=COLORS[kind], label=kind, width=0.7)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for i, p in enumerate(c):
        if p.compaction:
            ax.axvline(i, color=COLORS["compaction"], linestyle=":", linewidth=1)
        elif bottom[i]:
            ax.annotate(f"{bottom[i]:,}", (i, bottom[i]), ha="center", va="bottom", fontsize=7)
    nonzero = sorted(b for b in bottom if b)
    if nonzero and nonzero[-1] > 50 * nonzero[len(nonzero) // 2]:  # a bootstrap beside small rounds
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylabel("records (log scale)", fontsize=8)
    else:
        ax.set_ylabel("records", fontsize=8)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _ticks(ax, [_when(p.at) for p in c])
    ax.legend(fontsize=7, frameon=False, ncols=3)
    return _svg(fig)


def _unit(seconds: float) -> tuple[str, float]:
    """The unit a span reads best in: seconds, minutes, hours or days."""
    for name, per in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= 2 * per:
            return name, per
    return "seconds", 1.0


def freshness_chart(r: TableReport) -> str:
    """Freshness at each commit: its time minus the newest source event time it applied."""
    fig, ax = _figure("Freshness at each commit (commit time - newest source event applied)")
    points = [(p.at, p.freshness_seconds) for p in r.commits if p.freshness_seconds is not None]
    if not points:
        _empty(ax, "no source event times in the commit metadata (written by hudi-cdc's streamer)")
        return _svg(fig)
    unit, per = _unit(max(f for _, f in points))
    ax.plot(range(len(points)), [f / per for _, f in points], marker="o", markersize=3, color=COLORS["fresh"])
    ax.set_ylabel(unit, fontsize=8)
    ax.set_ylim(bottom=0)
    _ticks(ax, [_when(t) for t, _ in points])
    return _svg(fig)


def file_sizes_chart(r: TableReport) -> str:
    """How the latest file slices' base and log files spread over sizes."""
    fig, ax = _figure("File sizes of the latest file slices")
    if not r.file_sizes:
        _empty(ax, "no files")
        return _svg(fig)
    kib = [[s / 1024 for s in r.base_file_sizes], [s / 1024 for s in r.log_file_sizes]]
    ax.hist(kib, bins=min(20, max(5, len(r.file_sizes))), stacked=True, color=[COLORS["base"], COLORS["log"]],
            label=[f"base files ({len(kib[0])})", f"log files ({len(kib[1])})"])
    ax.set_xlabel("KiB", fontsize=8)
    ax.set_ylabel("files", fontsize=8)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=7, frameon=False)
    return _svg(fig)


def log_growth_chart(r: TableReport) -> str:
    """MoR: bytes appended to log files per delta commit and their running sum since the last
    compaction (reset by each completed compaction, drawn as a dotted line)."""
    fig, ax = _figure("Log growth and compactions (MoR)")
    c = r.commits
    if not c:
        _empty(ax, "no completed commits")
        return _svg(fig)
    running, since = 0, []
    for p in c:
        running = 0 if p.compaction else running + p.log_bytes
        since.append(running / 1024)
    x = list(range(len(c)))
    ax.bar(x, [p.log_bytes / 1024 for p in c], color=COLORS["log"], width=0.7, label="log KiB written")
    ax.plot(x, since, color="#333", marker=".", label="log KiB since last compaction")
    for i, p in enumerate(c):
        if p.compaction:
            ax.axvline(i, color=COLORS["compaction"], linestyle=":", linewidth=1.5)
    ax.set_ylabel("KiB", fontsize=8)
    _ticks(ax, [_when(p.at) for p in c])
    ax.legend(fontsize=7, frameon=False)
    return _svg(fig)


def table_charts(r: TableReport) -> dict[str, str]:
    """name -> inline SVG, in page order."""
    charts = {"commits": commits_chart(r), "freshness": freshness_chart(r), "file-sizes": file_sizes_chart(r)}
    if r.is_mor:
        charts["log-growth"] = log_growth_chart(r)
    return charts
