"""The report page: one self-contained HTML file (inline SVG charts, inline CSS, no scripts, no
network) with a summary row and the per-commit figures of every table."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

from jinja2 import Environment

from hudi_cdc.common.text import human_bytes
from hudi_cdc.report.charts import table_charts
from hudi_cdc.report.data import TableReport
from hudi_cdc.report.svg import Glyphs

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5rem; color: #222; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 12px; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; } figure.chart { margin: 0; }
figure.chart svg { max-width: 100%; height: auto; } .error { color: #b00020; } .muted { color: #777; }
</style></head>
<body>
{{ glyphs | safe }}
<h1>{{ title }}</h1>
<p class="muted">generated {{ generated }} by hudi-cdc report from the tables' timelines (no JVM)</p>
<table id="summary"><tr><th>table</th><th>type</th><th>version</th><th>commits</th><th>inserted</th>
<th>updated</th><th>deleted</th><th>compactions</th><th>pending compactions</th><th>files</th><th>bytes</th>
<th>newest source event applied</th></tr>
{% for r in tables %}{% set t = r.totals() %}<tr data-table="{{ r.label }}">
<td>{{ r.label }}</td><td>{{ r.table_type }}</td><td>{{ r.version }}</td>
{% for k in ("commits", "inserted", "updated", "deleted", "compactions") %}
<td class="n" data-field="{{ k }}">{{ t[k] }}</td>{% endfor %}
<td class="n" data-field="pending_compactions">{{ r.pending_compactions }}</td>
<td class="n" data-field="files">{{ t.files }}</td>
<td class="n" data-field="total_bytes" title="{{ human(t.total_bytes) }}">{{ t.total_bytes }}</td>
<td>{% if t.source_ts_ms is not none %}{{ utc(t.source_ts_ms) }}
(<span data-field="source_ts_ms">{{ t.source_ts_ms }}</span>){% else %}-{% endif %}</td></tr>
{% endfor %}</table>
{% for r in tables %}
<section class="table" data-table="{{ r.label }}">
<h2>{{ r.label }} <span class="muted">{{ r.table_type }} · {{ r.base_path }}</span></h2>
{% if r.error %}<p class="error">{{ r.error }}</p>{% else %}
<div class="charts">{% for name, svg in charts[loop.index0].items() %}
<figure class="chart" data-chart="{{ name }}">{{ svg | safe }}</figure>{% endfor %}</div>
<details><summary>{{ r.commits | length }} commits</summary>
<table class="commits"><tr><th>instant</th><th>action</th><th>operation</th><th>inserted</th><th>updated</th>
<th>deleted</th><th>written</th><th>bytes</th><th>log bytes</th><th>freshness (s)</th></tr>
{% for p in r.commits %}<tr data-instant="{{ p.instant }}"><td>{{ p.instant }}</td>
<td>{{ p.action }}{% if p.compaction %} (compaction){% endif %}</td><td>{{ p.operation or "" }}</td>
<td class="n" data-field="inserted">{{ p.inserted }}</td><td class="n" data-field="updated">{{ p.updated }}</td>
<td class="n" data-field="deleted">{{ p.deleted }}</td><td class="n" data-field="written">{{ p.written }}</td>
<td class="n" data-field="bytes_written">{{ p.bytes_written }}</td>
<td class="n" data-field="log_bytes">{{ p.log_bytes }}</td>
<td class="n">{{ "" if p.freshness_seconds is none else p.freshness_seconds }}</td></tr>
{% endfor %}</table></details>{% endif %}
</section>{% endfor %}
</body></html>
"""


def _utc_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def render_page(tables: list[TableReport], title: str, now: float | None = None) -> str:
    env = Environment(autoescape=True)
    generated = datetime.fromtimestamp(now or time.time(), tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    glyphs = Glyphs()
    charts = [{} if r.error else table_charts(r, glyphs) for r in tables]
    return env.from_string(PAGE).render(title=title, generated=generated, tables=tables, charts=charts,
                                        glyphs=glyphs.defs(), human=human_bytes, utc=_utc_ms)


def write_report(tables: list[TableReport], out_dir: str | Path, title: str) -> Path:
    """Write <out_dir>/index.html; returns its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(render_page(tables, title), encoding="utf-8")
    return path
