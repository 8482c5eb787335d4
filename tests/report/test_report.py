"""`hudi-cdc report`: the static HTML page with charts, built from the timeline (no JVM) over the
shared fixture tables; its figures equal `inspect commits`; and the page in Debian's real headless
chromium (mark `browser`): no console errors, every chart drawn, a screenshot in the test's tmp dir."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser

import pytest

from hudi_cdc.cli import main
from hudi_cdc.report import pipeline_report

TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"  # MoR: 8 inserts, 3 updates, 1 delete, a compaction
COW = "sample_table/cow/v8_simplekeygen_nonhivestyle"
CHROMIUM = "/usr/bin/chromium"
# versions 6, 8, 9; CoW and MoR; empty; two folders of the same name (the label takes the parent too)
SOME = [TRIPS, COW, "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle",
        "sample_table/mor/avro/v9_txns_simple_meta", "sample_table/cow/v8_empty",
        "sample_table/cow/v6_nonpartitioned", "sample_table/mor/parquet/v6_nonpartitioned"]


class _Cells(HTMLParser):
    """data-field cells: {(table label, instant or None): {field: int}}."""

    def __init__(self):
        super().__init__()
        self.table = None
        self.instant = None
        self.field = None
        self.cells: dict = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-table" in a:
            self.table, self.instant = a["data-table"], None
        elif tag == "section":
            self.table = a.get("data-table")
        elif tag == "tr" and "data-instant" in a:
            self.instant = a["data-instant"]
        elif tag in ("td", "span") and "data-field" in a:
            self.field = a["data-field"]

    def handle_data(self, data):
        if self.field:
            self.cells.setdefault((self.table, self.instant), {})[self.field] = int(data)
            self.field = None


def _cells(html: str) -> dict:
    p = _Cells()
    p.feed(html)
    return p.cells


def _inspect_commits(path, capsys) -> list[dict]:
    capsys.readouterr()
    assert main(["inspect", "commits", "--path", str(path), "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _assert_page_matches_inspect(html: str, label: str, path, capsys) -> None:
    rows = _inspect_commits(path, capsys)
    cells = _cells(html)
    for row in rows:
        got = cells[(label, row["requested_time"])]
        assert got == {"inserted": row["records_inserted"], "updated": row["records_updated"],
                       "deleted": row["records_deleted"], "written": row["records_written"],
                       "bytes_written": row["bytes_written"], "log_bytes": got["log_bytes"]}
    writes = [r for r in rows if r.get("planned_action") != "compaction"]
    summary = cells[(label, None)]
    assert summary["commits"] == len(rows)
    assert summary["compactions"] == len(rows) - len(writes)
    for field in ("inserted", "updated", "deleted"):
        assert summary[field] == sum(r[f"records_{field}"] for r in writes)


def test_report_over_fixture_tables_matches_inspect(hudi_fixture_tables, tmp_path, capsys):
    paths = [str(hudi_fixture_tables[k]) for k in SOME]
    page, tables = pipeline_report(None, tmp_path, paths=paths)
    html = page.read_text()
    assert len(tables) == len(paths) and html.count('<section class="table"') == len(paths)
    assert len({r.label for r in tables}) == len(paths)
    for r in tables:
        assert r.error is None, r.label
        if r.label.endswith("_empty"):  # drawn as empty charts; inspect refuses an empty table
            assert r.commits == [] and r.totals()["commits"] == 0
            assert main(["inspect", "commits", "--path", r.base_path]) == 6
            continue
        assert r.commits, r.label
        _assert_page_matches_inspect(html, r.label, r.base_path, capsys)
    trips = next(r for r in tables if r.label == "v8_trips_8i3u1d")
    assert trips.totals() | {"files": 0, "total_bytes": 0} == {
        "commits": 7, "inserted": 8, "updated": 3, "deleted": 2, "compactions": 1, "files": 0, "total_bytes": 0,
        "source_ts_ms": None}
    # self-contained: nothing to fetch (no src/href but in-page #refs), no scripts
    assert re.findall(r'\b(?:src|href)="(?!#)', html) == [] and "<script" not in html


@pytest.mark.browser
def test_report_page_in_headless_chromium(hudi_fixture_tables, tmp_path, capsys):
    """Debian's chromium (scripts/install-chromium.sh) driven by playwright over CDP, offline (~10 s)."""
    from playwright.sync_api import sync_playwright

    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} missing: run scripts/install-chromium.sh"
    paths = {"v8_trips_8i3u1d": hudi_fixture_tables[TRIPS], "v8_simplekeygen_nonhivestyle": hudi_fixture_tables[COW]}
    out = tmp_path / "report"
    args = ["report", "--out", str(out)] + [a for p in paths.values() for a in ("--path", str(p))]
    assert main([*args, "-o", "json"]) == 0
    listed = {r["table"]: r for r in json.loads(capsys.readouterr().out)}
    page_file = out / "index.html"
    messages: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
            page.on("requestfailed", lambda r: messages.append(f"requestfailed: {r.url}"))
            page.goto(page_file.as_uri(), wait_until="load")
            charts = page.eval_on_selector_all("figure.chart svg", """svgs => svgs.map(s => {
                const b = s.getBoundingClientRect();
                return {chart: s.parentElement.dataset.chart, w: b.width, h: b.height,
                        shapes: s.querySelectorAll('path, rect, use').length};
            })""")
            html = page.content()
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"report screenshot: {shot}")
    assert messages == []
    # MoR: commits, freshness, file sizes, log growth; CoW: the first three
    assert [c["chart"] for c in charts] == ["commits", "freshness", "file-sizes", "log-growth",
                                            "commits", "freshness", "file-sizes"]
    for c in charts:
        assert c["w"] > 200 and c["h"] > 100 and c["shapes"] > 20, c
    assert shot.stat().st_size > 20_000
    for label, path in paths.items():
        _assert_page_matches_inspect(html, label, path, capsys)
        assert _cells(html)[(label, None)]["commits"] == listed[label]["commits"]
