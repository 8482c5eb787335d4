"""`verify --wait`: the comparison repeated while capture and stream catch up (no database: the
comparison itself is stood in for; tests/capture/test_capture.py runs the real one on PostgreSQL)."""

from __future__ import annotations

import pytest

from hudi_cdc.sources.verify import VerifyResult, verify_until_equal


def _results(*equal: bool):
    seen = []

    def compare(pipeline, table, table_type):
        r = VerifyResult(table, table_type, equal=equal[len(seen)], db_rows=3, lake_rows=3 if equal[len(seen)] else 2)
        if not r.equal:
            r.missing, r.missing_keys = 1, ["7"]
        seen.append(r)
        return r

    return compare, seen


def test_compares_again_until_equal_and_says_each_difference():
    compare, seen = _results(False, False, True)
    said = []
    r = verify_until_equal(None, "artists", "MERGE_ON_READ", wait_seconds=30, poll_seconds=0.01,
                           progress=said.append, compare=compare)
    assert r.equal and len(seen) == 3
    line = "artists (MERGE_ON_READ): DIFFERS: 1 missing in the lake (e.g. key 7); comparing again in 0.01 s"
    assert said == [line] * 2


def test_gives_up_after_the_wait_with_the_last_differences():
    compare, seen = _results(*[False] * 1000)
    r = verify_until_equal(None, "artists", "COPY_ON_WRITE", wait_seconds=0.05, poll_seconds=0.01, compare=compare)
    assert not r.equal and r.missing_keys == ["7"] and 2 <= len(seen) < 1000


def test_no_wait_is_one_comparison():
    compare, seen = _results(False, True)
    assert not verify_until_equal(None, "t", "COPY_ON_WRITE", wait_seconds=0, compare=compare).equal
    assert len(seen) == 1


def test_an_error_is_not_retried():
    calls = []

    def compare(*_):
        calls.append(1)
        raise RuntimeError("database down")

    with pytest.raises(RuntimeError, match="database down"):
        verify_until_equal(None, "t", "COPY_ON_WRITE", wait_seconds=30, poll_seconds=0.01, compare=compare)
    assert calls == [1]


def test_verify_whole_prints_each_differing_version(tmp_path, monkeypatch):
    """`verify --history --whole`: the current versions' comparison, then the whole history's (both stood
    in for here: tests/jobs/test_history.py runs them on real tables); each differing version one line."""
    import json

    from click.testing import CliRunner

    from hudi_cdc.cli import cli
    from hudi_cdc.sources import verify as v

    (tmp_path / "hudi-cdc.yaml").write_text(json.dumps({
        "pipeline": "bank", "source": {"root": str(tmp_path / "landing")},
        "lake": {"root": str(tmp_path / "lake"), "hive_database": "bank"},
        "tables": {"accounts": {"topic": "db.public.accounts", "record_key": "aid", "history": "scd2"}}}))
    monkeypatch.setattr(v, "verify", lambda p, t, tt, history=False: VerifyResult(t, tt, True, 2, 2))

    def whole(p, t, tt):
        r = VerifyResult(f"{t} history", tt, False, 3, 3, different=1, different_keys=["aid=1 from LSN 200"])
        r.details = ["version aid=1 from LSN 200: __valid_to_lsn: table 311, replay 310"]
        return r

    monkeypatch.setattr(v, "verify_whole", whole)
    runner = CliRunner()
    args = ["-c", str(tmp_path / "hudi-cdc.yaml"), "verify", "--table", "accounts"]
    out = runner.invoke(cli, [*args, "--whole"])
    assert out.exit_code == 2 and "give --history too" in out.output
    out = runner.invoke(cli, [*args, "--history", "--whole"])
    assert isinstance(out.exception, v.TablesDiffer) and out.exception.exit_code == 10, out.output
    assert str(out.exception) == "accounts history (COPY_ON_WRITE): DIFFERS: 1 different (e.g. key aid=1 from LSN 200)"
    assert "accounts (COPY_ON_WRITE): equal (2 rows" in out.output
    assert "  version aid=1 from LSN 200: __valid_to_lsn: table 311, replay 310" in out.output


def test_verify_all_names_each_table_and_goes_on_past_one(tmp_path, monkeypatch):
    """`verify --all`: every table of --type one line each; a table that cannot be compared (not bootstrapped) is
    named at the end (its exit code) after the others were compared; else any difference exits 10 naming each
    differing table; the database down stops at once."""
    import json

    from click.testing import CliRunner

    from hudi_cdc.cli import cli
    from hudi_cdc.errors import SourceError, TablesFailed, TableStateError
    from hudi_cdc.sources import verify as v

    (tmp_path / "hudi-cdc.yaml").write_text(json.dumps({
        "pipeline": "bank", "source": {"root": str(tmp_path / "landing")},
        "lake": {"root": str(tmp_path / "lake"), "hive_database": "bank"},
        "tables": {n: {"topic": f"db.public.{n}", "record_key": "id"} for n in ("a", "b", "c")}}))
    state = {"b": "differs", "c": "missing"}

    def fake(p, t, tt, history=False):
        if state.get(t) == "missing":
            raise TableStateError(f"table {t} ({tt}) does not exist; run `hudi-cdc bootstrap` first")
        if state.get(t) == "down":
            raise SourceError("cannot connect to postgres@127.0.0.1:1/bank")
        return VerifyResult(t, tt, state.get(t) != "differs", 2, 2, different=int(state.get(t) == "differs"))

    monkeypatch.setattr(v, "verify", fake)
    runner = CliRunner()
    args = ["-c", str(tmp_path / "hudi-cdc.yaml"), "verify", "--all"]
    out = runner.invoke(cli, args)
    assert isinstance(out.exception, TablesFailed) and out.exception.names == {("c", "COPY_ON_WRITE")}
    assert "a (COPY_ON_WRITE): equal" in out.output and "b (COPY_ON_WRITE): DIFFERS" in out.output
    del state["c"]
    out = runner.invoke(cli, [*args, "--type", "mor"])
    assert isinstance(out.exception, v.TablesDiffer) and str(out.exception).startswith("1 of 3 table(s) differ: b")
    state["a"] = "down"
    assert isinstance(runner.invoke(cli, args).exception, SourceError)
    assert runner.invoke(cli, ["-c", str(tmp_path / "hudi-cdc.yaml"), "verify"]).exit_code == 2
