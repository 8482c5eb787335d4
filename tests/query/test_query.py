"""`hudi-cdc query` on the MoMA sample pipeline written by real Spark + Hudi 1.2.0: the seed's
changes to artist 299 landed as separate files, one UPSERT round each, in a CoW and a MoR table
(the MoR table compacts inline after 3 delta commits). Checked: the history of 299 against the
seed, Spark and hudi-rs row for row on every as-of instant, incremental reads against the commit
metadata hudi-rs reads, and one-line errors for bad input."""

from __future__ import annotations

import json

import pytest

from hudi_cdc.cli import main
from hudi_cdc.query import as_of, changes, history, open_query_table
from hudi_cdc.query.errors import BeforeFirstCommitError
from hudi_cdc.query.rows import COMMIT_TIME

pytestmark = pytest.mark.spark

TYPES = ("cow", "mor")
SEED_COLUMNS = ["__op", "name", "nationality", "birth_year", "death_year"]
# The seed's time-travel table for artist 299 (001, "Time Travel"), oldest first; hard deletes here,
# so the last state is the delete derived from the commit that removed the row.
SEED_HISTORY = [
    ("insert", "r", "Gerhard H. Bakker", "American", 1906, 1988),
    ("update", "u", "Gerhard H. Bakker", "American", 1907, 1989),
    ("update", "u", "Gerhard M. Bakker", "American", 1907, 1989),
    ("update", "u", "Gerhard M. Bakker", "German", 1907, 1989),
    ("update", "u", "Gerhard M. Bakker", "German", 1905, 1989),
    ("delete", None, None, None, None, None),
]


def _seq(states):
    return [(s["change"], s["__op"], s["name"], s["nationality"], s["birth_year"], s["death_year"]) for s in states]


def _hudi_rs_metadata(path):
    """Commit metadata of every completed commit and delta commit, read by hudi-rs itself."""
    from hudi import HudiTableBuilder

    tl = HudiTableBuilder.from_base_uri(path).build().get_timeline()
    return {i.timestamp: json.loads(tl.get_instant_metadata_in_json(i))
            for i in tl.get_completed_commits() + tl.get_completed_deltacommits()}


def _upserts(meta):
    stats = [s for ss in meta["partitionToWriteStats"].values() for s in ss]
    return sum(s["numInserts"] + s["numUpdateWrites"] for s in stats), sum(s["numDeletes"] for s in stats)


@pytest.mark.parametrize("tt", TYPES)
def test_history_is_the_seeds_sequence(sample_paths, spark, tt):
    path = sample_paths[tt]
    qt = open_query_table(path)
    writes = [c for c in qt.commits if not c.rewrites_only]
    for engine in ("native", "spark"):
        res = history(path, "299", spark=spark if engine == "spark" else None, engine=engine, columns=SEED_COLUMNS)
        assert _seq(res.states) == SEED_HISTORY, engine
        # one state per commit, each the commit that made it, with Hudi's operation and wall-clock time
        assert [s["instant"] for s in res.states] == [c.requested_time for c in writes]
        # the stream rounds hand Hudi located ("prepped") records: jobs/stream/located.py
        assert [s["operation"] for s in res.states] == ["bulk_insert"] + ["upsert_prepped"] * 5
        assert [s["committed_at"] for s in res.states] == [qt.wall_clock(c.completion_time) for c in writes]
        assert res.states[3]["_hoodie_partition_path"] == "nationality=German"
        assert all(s["artist_id"] == 299 for s in res.states)


DEFAULT_PARTITION = "=__HIVE_DEFAULT_PARTITION__"


def _as_spark_reads_it(row):
    """Spark takes a partition column's value from the partition path, so an empty nationality
    (stored as '' in the data file, which hudi-rs returns) reads as null in the default partition."""
    if row["_hoodie_partition_path"].endswith(DEFAULT_PARTITION) and row["nationality"] == "":
        return dict(row, nationality=None)
    return row


@pytest.mark.parametrize("tt", TYPES)
def test_spark_and_native_agree_on_every_as_of_instant(sample_paths, spark, tt):
    path = sample_paths[tt]
    qt = open_query_table(path)
    views = (False, True) if tt == "mor" else (False,)
    for commit in qt.commits:
        for ro in views:
            s = as_of(qt, commit.requested_time, spark=spark, read_optimized=ro)
            n = as_of(qt, commit.requested_time, engine="native", read_optimized=ro)
            assert s.commit == n.commit == commit
            assert len(s.rows) >= 15088 and s.rows == [_as_spark_reads_it(r) for r in n.rows], (commit, ro)
            # ... and that is the only difference: in the default partition only
            assert sum(r != _as_spark_reads_it(r) for r in n.rows) == sum(
                r["_hoodie_partition_path"].endswith(DEFAULT_PARTITION) and r["nationality"] == "" for r in n.rows)
    # the read-optimized view lags the snapshot: the compacted 299 is still there after its delete
    last = qt.latest().requested_time
    ro = as_of(qt if tt == "mor" else path, last, engine="native", read_optimized=True, columns=SEED_COLUMNS)
    snap = as_of(qt, last, engine="native")
    assert 299 not in {r["artist_id"] for r in snap.rows}
    if tt == "mor":
        (row,) = [r for r in ro.rows if r["artist_id"] == 299]
        assert (row["nationality"], row["birth_year"]) == ("German", 1907)  # as compacted, before 1905
        # between the partition move and the compaction, _ro readers see 299 where it was: the delete
        # from American is a log block, and so is the insert into German's file group (log_inserts.py)
        moved = [c for c in qt.commits if not c.rewrites_only][3]
        seen = [r for r in as_of(qt, moved.requested_time, spark=spark, read_optimized=True).rows
                if r["artist_id"] == 299]
        assert [(r["nationality"], r["birth_year"]) for r in seen] == [("American", 1906)]


def test_times_resolve_to_the_commit_visible_then(sample_paths):
    """Wall-clock times compare with completion times; an instant equal to a commit's requested
    time names that commit; ISO, zoned and instant spellings of one moment agree."""
    from datetime import datetime, timedelta, timezone

    qt = open_query_table(sample_paths["mor"])
    commits = qt.commits
    for prev, c in zip(commits, commits[1:], strict=False):
        done = qt.wall_clock(c.completion_time)
        assert qt.commit_at(c.requested_time) == c  # names the commit
        assert qt.commit_at(done) == c
        just_before = (datetime.fromisoformat(done.replace("Z", "+00:00")) - timedelta(milliseconds=1))
        assert qt.commit_at(just_before.isoformat()) == prev
        est = just_before.astimezone(timezone(timedelta(hours=-5))).isoformat()
        assert qt.commit_at(est) == prev
    with pytest.raises(BeforeFirstCommitError, match="is before the first commit .* completed at 20"):
        qt.commit_at("2021-12-30T13:00:00Z")


@pytest.mark.parametrize("tt", TYPES)
def test_changes_are_exactly_what_the_commits_wrote(sample_paths, spark, tt):
    path = sample_paths[tt]
    qt = open_query_table(path)
    meta = _hudi_rs_metadata(qt.read_uri)
    writes = [c for c in qt.commits if not c.rewrites_only]
    assert {c.requested_time for c in qt.commits} == set(meta)
    for engine, sp in (("native", None), ("spark", spark)):
        # from the beginning to the first commit: the bulk insert
        first = changes(path, "2020-01-01", writes[0].requested_time, spark=sp, engine=engine)
        assert len(first.rows) == _upserts(meta[writes[0].requested_time])[0] == first.totals["inserts"] == 15089
        # each commit alone: its upserted records, nothing else, as the table shows them at that commit
        for prev, c in zip(writes, writes[1:], strict=False):
            res = changes(path, prev.requested_time, c.requested_time, spark=sp, engine=engine)
            upserts, deletes = _upserts(meta[c.requested_time])
            assert [x["instant"] for x in res.commits] == [c.requested_time]
            assert len(res.rows) == upserts and res.totals["deletes"] == deletes, (engine, c)
            assert {r[COMMIT_TIME] for r in res.rows} <= {c.requested_time}
            snapshot = {r["artist_id"]: r for r in as_of(qt, c.requested_time, engine="native").rows}
            assert all(r == snapshot[r["artist_id"]] for r in res.rows)
        # a range of commits: the latest version of each record, deletes gone
        mid = changes(path, writes[1].requested_time, writes[4].requested_time, spark=sp, engine=engine)
        assert [(r["artist_id"], r["nationality"], r["birth_year"]) for r in mid.rows] == [(299, "German", 1905)]
        assert mid.rows[0][COMMIT_TIME] == writes[4].requested_time
        gone = changes(path, writes[1].requested_time, spark=sp, engine=engine)
        assert gone.rows == []
        assert gone.totals["deletes"] == sum(_upserts(meta[c.requested_time])[1] for c in writes[2:])


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_history_json_and_as_of(sample_lake, capsys):
    cfg = sample_lake.config
    code, out, err = _cli(capsys, "--config", cfg, "query", "history", "--table", "artists", "--type", "mor",
                          "--key", "299", "--engine", "native", "-o", "json")
    assert code == 0, err
    states = json.loads(out)
    assert _seq(states) == SEED_HISTORY
    assert states == sorted(states, key=lambda s: s["instant"])  # oldest first
    code, out, err = _cli(capsys, "--config", cfg, "query", "as-of", "--table", "artists", "--type", "cow",
                          "--at", states[2]["committed_at"], "--where", "artist_id = 299", "--engine", "spark",
                          "-o", "csv", "--columns", "name")
    assert code == 0, err
    assert out.splitlines()[0] == "_hoodie_commit_time,committed_at,_hoodie_partition_path,artist_id,name"
    assert out.splitlines()[1].endswith(",nationality=American,299,Gerhard M. Bakker")
    assert "as of" in err and "completed" in err
    code, out, err = _cli(capsys, "--config", cfg, "query", "changes", "--table", "artists", "--type", "cow",
                          "--since", "2020-01-01", "--until", "2020-01-02", "--engine", "native")
    assert code == 6 and err.startswith("error: 2020-01-02 is before the first commit")


@pytest.mark.parametrize("argv, code, message", [
    (["as-of", "--at", "yesterday"], 2, "error: bad time 'yesterday': use a Hudi instant (yyyyMMddHHmmssSSS)"),
    (["as-of", "--at", "20211340000000"], 2, "is not a valid Hudi instant"),
    (["as-of", "--at", "2021-12-30T08:00:00-05:00"], 6, "error: 2021-12-30T08:00:00-05:00 is before the first commit"),
    (["history", "--key", "12345678"], 6, "error: no record with artist_id = 12345678 in any of the 6 commits"),
    (["history", "--key", "Bakker"], 2, "error: --key 'Bakker': artist_id is a int32 column, not a number"),
    (["changes", "--since", "2099-01-01", "--until", "2026-01-01"], 6, "is before the first commit"),
    (["as-of", "--at", "2099-01-01", "--where", "artist_id IN (1, 2)"], 2, "use --engine spark for full Spark SQL"),
    (["as-of", "--at", "2099-01-01", "--where", "no_such = 1"], 2, "unknown column 'no_such' in --where"),
])
def test_bad_input_is_one_clear_line(sample_paths, capsys, argv, code, message):
    got, out, err = _cli(capsys, "query", *argv, "--path", sample_paths["mor"], "--engine", "native")
    assert got == code and message in err and err.count("\n") == 1 and out == ""


def test_not_a_hudi_table(tmp_path, capsys):
    got, _out, err = _cli(capsys, "query", "history", "--path", str(tmp_path), "--key", "1", "--engine", "native")
    assert got == 6 and err.strip() == f"error: {tmp_path} is not a Hudi table (no .hoodie/hoodie.properties)"


def test_spark_errors_are_one_line_too(sample_paths, spark, capsys):
    got, out, err = _cli(capsys, "query", "as-of", "--at", "2099-01-01", "--where", "no_such = 1",
                         "--path", sample_paths["cow"], "--engine", "spark")
    assert got == 2 and err.startswith("error: --where 'no_such = 1': ") and err.count("\n") == 1 and out == ""
    assert "no_such" in err


def test_notebook_dataframes(sample_paths, spark):
    """The DataFrame API a notebook uses resolves times as the commands do."""
    from hudi_cdc.query import as_of_dataframe, changes_dataframe

    qt = open_query_table(sample_paths["mor"])
    writes = [c for c in qt.commits if not c.rewrites_only]
    at = qt.wall_clock(writes[2].completion_time)  # an ISO time: the middle-initial commit
    (row,) = as_of_dataframe(spark, qt, at).where("artist_id = 299").collect()
    assert (row["_hoodie_commit_time"], row["name"]) == (writes[2].requested_time, "Gerhard M. Bakker")
    df = changes_dataframe(spark, qt, writes[0].requested_time, writes[2].requested_time)
    assert [(r["artist_id"], r["_hoodie_commit_time"]) for r in df.collect()] == [(299, writes[2].requested_time)]
