"""The benchmark report: report.md + PNG charts (matplotlib, Agg) + results.json, from run.py's results."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# the targets (issue 12): (label, how to read the measured value, bound, "<=" | ">=")
TARGETS = [
    ("bootstrap CoW / plain Parquet", ("bootstrap", "ratio_cow"), 1.5, "<="),
    ("bootstrap MoR / plain Parquet", ("bootstrap", "ratio_mor"), 1.5, "<="),
    ("1% upsert round: MoR / CoW (defaults)", ("upsert", "ratio_mor_vs_cow"), 0.6, "<="),
    ("1% upsert round: MoR / CoW, keys looked up by Hudi's index", ("upsert", "ratio_mor_vs_cow_index"), 0.6, "<="),
    ("1% upsert round CoW: seed settings / defaults", ("upsert", "speedup_defaults_vs_seed_cow"), 2.0, ">="),
    ("1% upsert round MoR: seed settings / defaults", ("upsert", "speedup_defaults_vs_seed_mor"), 2.0, ">="),
    *((f"change round growth, smallest -> largest table: {i}", ("growth", "growth_ratio", i), 1.5, "<=")
      for i in ("LOCATED", "LOCATED_MOR", "GLOBAL_SIMPLE", "RECORD_INDEX", "GLOBAL_BLOOM")),
    ("commit-to-visible p50, continuous mode (s)", ("latency", "p50_s"), 10.0, "<="),
    ("inspect commits: JVM show_commits / hudi-cdc", ("inspect", "ratio_jvm_over_hudi_cdc"), 100.0, ">="),
]


UPSERT_NAMES = [("defaults", "cow"), ("defaults", "mor"), ("index", "cow"), ("index", "mor"), ("seed", "cow"),
                ("seed", "mor")]


def machine() -> dict:
    import psutil

    model = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "ram_gb": round(psutil.virtual_memory().total / 2**30, 1), "cpu": model,
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "python": platform.python_version(),
            "platform": platform.platform()}


def _get(results: dict, path: tuple):
    cur = results
    for p in path:
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


def _bars(path: Path, title: str, labels: list[str], values: list[float], rss: list[float] | None = None,
          ylabel: str = "seconds (median)", hline: tuple[float, str] | None = None) -> None:
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    colors = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b2", "#937860"]
    bars = ax.bar(labels, values, color=colors[:len(values)])
    for i, b in enumerate(bars):
        text = f"{values[i]:.1f}s" if ylabel.startswith("seconds") else f"{values[i]:.0f}"
        if rss:
            text += f"\n{rss[i]:.0f} MB"
        ax.annotate(text, (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom", fontsize=9)
    if hline:
        ax.axhline(hline[0], color="grey", linestyle="--", linewidth=1)
        ax.annotate(hline[1], (0.01, hline[0]), xycoords=("axes fraction", "data"), va="bottom", fontsize=8,
                    color="grey")
    ax.set_title(title, fontsize=11)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, max(values + [hline[0] if hline else 0]) * 1.25 or 1)
    plt.setp(ax.get_xticklabels(), fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def charts(results: dict, out: Path) -> list[str]:
    made = []
    if "bootstrap" in results:
        r = results["bootstrap"]
        names = ["plain parquet", "bootstrap cow", "bootstrap mor"]
        _bars(out / "bootstrap.png", f"Bootstrap of {results['rows']:,} rows vs plain Parquet (peak RSS below)",
              names, [r[n]["median_s"] for n in names], [r[n]["peak_rss_mb"] for n in names],
              hline=(r["plain parquet"]["median_s"] * 1.5, "target: 1.5x plain Parquet"))
        made.append("bootstrap.png")
    if "upsert" in results:
        r = results["upsert"]
        names = [f"{s} {k}" for s, k in UPSERT_NAMES if f"{s} {k}" in r]
        _bars(out / "upsert.png",
              f"One 1% upsert round ({r['change']['events']:,} events): defaults, through Hudi's index, seed",
              names, [r[n]["median_s"] for n in names], [r[n]["peak_rss_mb"] for n in names])
        made.append("upsert.png")
    if "growth" in results:
        r = results["growth"]
        fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
        sizes = [int(s) for s in r["sizes"]]
        for index in r["indexes"]:
            ys = [r["points"][str(s)][index]["median_s"] for s in sizes]
            ax.plot(sizes, ys, marker="o", label=f"{index} ({r['growth_ratio'][index]:.2f}x)")
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
        ax.set_xlabel("table size (rows)")
        ax.set_ylabel("round time, seconds (median)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"The same {r['changes']:,}-change round vs table size, per lookup (CoW; LOCATED_MOR: MoR)",
                     fontsize=11)
        ax.legend(title="index (growth small -> large)", fontsize=9)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / "growth.png")
        plt.close(fig)
        made.append("growth.png")
    if "latency" in results:
        r = results["latency"]
        fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
        ax.bar(range(1, len(r["latencies_s"]) + 1), r["latencies_s"], color="#4c72b0")
        for val, name, style in ((r["p50_s"], "p50", "-"), (r["p95_s"], "p95", ":"), (10.0, "target p50 10 s", "--")):
            ax.axhline(val, color="grey" if name.startswith("target") else "#c44e52", linestyle=style, linewidth=1)
            ax.annotate(f"{name} {val:.1f}s" if not name.startswith("target") else name, (1.0, val),
                        xycoords=("axes fraction", "data"), ha="right", va="bottom", fontsize=8)
        ax.set_xlabel("landed file #")
        ax.set_ylabel("seconds until committed (visible)")
        ax.set_title(f"Commit-to-visible, continuous stream, sync interval {r['interval_s']} s", fontsize=11)
        fig.tight_layout()
        fig.savefig(out / "latency.png")
        plt.close(fig)
        made.append("latency.png")
    if "compaction" in results:
        r = results["compaction"]
        labels = ["delta commit round", "round + inline compaction", "compaction alone"]
        vals = [r["round1_s"], r["round2_with_compaction_s"], r.get("compaction_s") or 0.0]
        _bars(out / "compaction.png", "MoR: delta commit vs compaction (one run)", labels, vals)
        made.append("compaction.png")
    return made


def _fmt_summary(s: dict) -> str:
    runs = ", ".join(f"{x:.1f}" for x in s["runs_s"])
    return f"{s['median_s']:.1f} s (runs {runs}; peak RSS {s['peak_rss_mb']:.0f} MB)"


def markdown(results: dict, pngs: list[str]) -> str:
    m = results["machine"]
    lines = [
        "# hudi-cdc benchmark report", "",
        f"Command: `{results['command']}`  ",
        f"Started {results['started']}, took {results.get('elapsed_s', 0) / 60:.1f} min.  ",
        f"Scale: **{results['rows']:,} rows**, medians of **{results['runs']}** run(s) per figure, whole processes "
        "(the `hudi-cdc` CLI via subprocess), peak RSS summed over the process tree (JVM included).  ",
        f"Machine: {m['cores']} cores ({m['cpu']}), {m['ram_gb']} GB RAM, load average at start "
        f"{' / '.join(str(x) for x in m['load_average_at_start'])} (1/5/15 min; other jobs share the cores, "
        "so absolute times are slow and noisy: read the ratios).", "",
        "## Targets (issue 12)", "", "| target | measured | bound | met |", "|---|---|---|---|",
    ]
    for label, path, bound, op in TARGETS:
        val = _get(results, path)
        if val is None:
            lines.append(f"| {label} | not measured | {op} {bound} | - |")
            continue
        ok = val <= bound if op == "<=" else val >= bound
        lines.append(f"| {label} | {val:.2f} | {op} {bound} | {'yes' if ok else '**no**'} |")
    if "bootstrap" in results:
        r = results["bootstrap"]
        lines += ["", "## Bootstrap vs plain Parquet", ""]
        for n in ("plain parquet", "bootstrap cow", "bootstrap mor"):
            lines.append(f"- {n}: {_fmt_summary(r[n])}, {r['sizes_mb'][n]:.1f} MB on disk")
    if "upsert" in results:
        r = results["upsert"]
        lines += ["", f"## One 1% upsert round ({r['change']['events']:,} events: {r['change']['mix']})", ""]
        for n in [f"{s} {k}" for s, k in UPSERT_NAMES if f"{s} {k}" in r]:
            c = r["commits"].get(n, [])
            written = ", ".join(f"{x['action']} {x.get('operation')}: {x.get('records_written')} records written, "
                                f"{x.get('files_updated')} files updated, {x.get('files_added')} added" for x in c[-2:])
            lines.append(f"- {n}: {_fmt_summary(r[n])}; last commits: {written}")
    if "growth" in results:
        r = results["growth"]
        lines += ["", f"## Cost growth: the same {r['changes']:,}-change round vs table size "
                      "(CoW; LOCATED_MOR on MoR)", "",
                  "| index | " + " | ".join(f"{int(s):,} rows" for s in r["sizes"]) + " | growth |",
                  "|---|" + "---|" * (len(r["sizes"]) + 1)]
        for i in r["indexes"]:
            pts = [r["points"][str(s)][i] for s in r["sizes"]]
            cells = [f"{p['median_s']:.1f} s ({p['peak_rss_mb']:.0f} MB)" for p in pts]
            lines.append(f"| {i} | " + " | ".join(cells) + f" | {r['growth_ratio'][i]:.2f}x |")
    if "latency" in results:
        r = results["latency"]
        lines += ["", "## Latency and per-round overhead", "",
                  f"- continuous `stream` (sync interval {r['interval_s']} s, 1,000-row CoW table, 10-event files): "
                  f"p50 **{r['p50_s']:.1f} s**, p95 {r['p95_s']:.1f} s over {r['files']} files "
                  f"({', '.join(f'{x:.1f}' for x in r['latencies_s'])}); "
                  f"peak RSS {r['continuous_peak_rss_mb']:.0f} MB; "
                  f"`hudi-cdc show --key` saw the last key: {r['show_saw_last_key']}",
                  f"- `stream --once` with nothing new (JVM start + one empty round): {_fmt_summary(r['once_empty'])}",
                  f"- `hudi-cdc --help` (Python start-up + CLI import): {_fmt_summary(r['cli_help'])}"]
    if "compaction" in results:
        r = results["compaction"]
        lines += ["", "## MoR compaction (one run)", "",
                  f"- delta commit round: {r['round1_s']:.1f} s; next round with inline compaction: "
                  f"{r['round2_with_compaction_s']:.1f} s; compaction alone (timeline): {r.get('compaction_s')} s; "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB",
                  f"- write amplification: the compaction wrote {r.get('compaction_records_written')} records for "
                  f"{r['changes']:,} changes ({(r.get('write_amplification') or 0):.1f}x); "
                  f"delta commits: {r['deltacommits']}",
                  f"- snapshot read (the _rt view, hudi-rs) before compaction {r['read_before']['median_s']:.2f} s, "
                  f"after {r['read_after']['median_s']:.2f} s ({r['read_after']['rows']:,} rows)"]
    if "inspect" in results:
        r = results["inspect"]
        lines += ["", "## inspect commits vs the JVM", "",
                  f"- `hudi-cdc inspect commits` {r['hudi_cdc_median_s']} s vs Spark+Hudi `show_commits` "
                  f"{r['jvm_median_s']} s: {r['ratio_jvm_over_hudi_cdc']}x ({r['commits']} commits, {r['runs']} runs)"]
    lines += ["", "## Charts", ""] + [f"![{p}]({p})" for p in pngs]
    return "\n".join(lines) + "\n"


def write(results: dict, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    pngs = charts(results, out)
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str))
    path = out / "report.md"
    path.write_text(markdown(results, pngs))
    return path


def save(results: dict, out: str | None) -> None:
    """A benchmark's results as JSON in ``out`` (when given): after each step, so a partial run survives."""
    if out:
        Path(out).write_text(json.dumps(results, indent=2))


def finish(results: dict, out: str | None) -> int:
    """The results saved (``save``) and printed as JSON on stdout; the benchmark's exit code (0)."""
    save(results, out)
    print(json.dumps(results, indent=2))
    return 0


def sustained_summary(results: dict) -> None:
    """A rate ladder's verdict: the highest offered rate of its steps that was sustained, and it per core."""
    ok = [s["offered_rate"] for s in results["steps"] if s["sustained"]]
    results["highest_sustained_rate"] = max(ok) if ok else None
    results["per_core"] = round(max(ok) / (os.cpu_count() or 1)) if ok else None
