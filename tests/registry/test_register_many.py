"""`schemas register` / `schemas check` over many tables: a table with nothing landed yet (an empty source
table) or a refused schema is named at the end, the other tables' subjects registered; the registry down stops
the command at once."""

from __future__ import annotations

import pytest

from hudi_cdc.config import parse_pipeline
from hudi_cdc.errors import DataError, TablesFailed
from hudi_cdc.registry import register as rg
from hudi_cdc.registry.errors import RegistryUnavailable


class FakeClient:
    def __init__(self, down: bool = False):
        self.registered: list[str] = []
        self.down = down

    def exists(self, subject):
        if self.down:
            raise RegistryUnavailable("registry unavailable after 4 attempts")
        return False

    def register(self, subject, schema, compatibility):
        self.registered.append(subject)
        return len(self.registered)

    def get(self, subject):
        return type("V", (), {"version": 1})()

    def subject_url(self, subject):
        return f"http://r/subjects/{subject}"


def test_a_table_with_nothing_landed_does_not_stop_the_others(tmp_path):
    from hudi_cdc import sample

    sample.land_snapshot(tmp_path / "landing", tables=("artists",), per_file=5000)
    tables = {"empty_t": {"topic": "moma.public.empty_t", "record_key": "id"},
              "artists": {"topic": "moma.public.artists", "record_key": "artist_id"}}
    p = parse_pipeline({"pipeline": "moma", "source": {"root": "landing"}, "lake": {"root": "lake"},
                        "tables": tables}, "p.yaml", str(tmp_path))
    client = FakeClient()
    with pytest.raises(TablesFailed) as info:
        rg.register_pipeline(client, p)
    assert info.value.names == {("empty_t", "moma.public.empty_t-value")}
    assert isinstance(info.value.failed[0][2], DataError) and "1 other(s) went through" in str(info.value)
    assert client.registered == ["moma.public.artists-value"]  # the table after the empty one
    with pytest.raises(TablesFailed):
        rg.check_pipeline(client, p)
    with pytest.raises(RegistryUnavailable):
        rg.register_pipeline(FakeClient(down=True), p, tables=["artists"])
