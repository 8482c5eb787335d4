"""The streamer's one shaping step (hudi_cdc/jobs/stream/shape.py) on the session's Spark: files a connector
hudi-cdc did not render landed unmasked, so the streamer hashes them, and its Spark hash is Debezium's
(common/shaping.mask_hash, which tests/capture/test_shaping.py proves against Debezium itself); the filter
turns a row into a delete, a derived column and a lake type are added, excluded columns dropped."""

from __future__ import annotations

import pytest

from hudi_cdc.common.shaping import REDACTED, Shape, mask_hash
from hudi_cdc.jobs.stream import shape
from hudi_cdc.jobs.stream.errors import JobInputError


@pytest.mark.spark
def test_streamer_shapes_a_round(spark, monkeypatch):
    monkeypatch.setenv("T_SALT", "s4lt")
    rows = [(1, "ann@x.org", "555", "SSN-1", "acme", "12.34567", "2024-03-01 23:30:00", False),
            (2, "Zoë@x.org", None, "SSN-2", "other", "1", "2024-03-02 00:10:00", False),
            (3, None, "556", "SSN-3", None, None, None, True),
            (4, "__debezium_unavailable_value", "__debezium_unavailable_value", "SSN-4", "acme", "0", None, False)]
    df = spark.createDataFrame(rows, "id int, email string, phone string, ssn string, tenant string, amount string, "
                                     "created_at string, _hoodie_is_deleted boolean")
    s = Shape(exclude=("ssn",), mask={"email": "hash", "phone": "redact"}, mask_in="streamer", salt_env="T_SALT",
              filter="tenant = 'acme'", derive={"day": "to_date(created_at)"},
              types={"amount": "decimal(20,4)"})
    out = {r["id"]: r.asDict() for r in shape.apply(df, s, "orders", ["id"]).collect()}
    assert "ssn" not in out[1] and str(out[1]["amount"]) == "12.3457" and str(out[1]["day"]) == "2024-03-01"
    assert [out[i]["email"] for i in (1, 2, 3)] == [mask_hash("ann@x.org", "s4lt"), mask_hash("Zoë@x.org", "s4lt"),
                                                     None]
    assert [out[i]["phone"] for i in (1, 2, 3)] == [REDACTED, REDACTED, REDACTED]  # NULL too, as Debezium
    assert [out[i]["_hoodie_is_deleted"] for i in (1, 2, 3)] == [False, True, True]  # out of the filter: deleted
    # an unchanged TOAST value's placeholder is left for toast.py to fill from the stored (masked) value
    assert out[4]["email"] == out[4]["phone"] == "__debezium_unavailable_value"
    # capture masked them already: the streamer leaves the values alone
    kept = shape.apply(df, Shape(mask={"email": "hash"}, salt_env="T_SALT"), "orders", ["id"]).collect()
    assert kept[0]["email"] == "ann@x.org"
    monkeypatch.delenv("T_SALT")
    with pytest.raises(JobInputError, match=r"^orders: environment variable T_SALT \(source\.mask_salt_env\)"):
        shape.apply(df, s, "orders", ["id"])
    with pytest.raises(JobInputError, match=r"^tables\.orders\.types\.price: no such column in the landed events"):
        shape.apply(df, Shape(types={"price": "double"}), "orders", ["id"])
    with pytest.raises(JobInputError, match=r"^tables\.orders: filter/derive cannot be applied to the landed events"):
        shape.apply(df, Shape(filter="nope > 1"), "orders", ["id"])
