import json, io
from pathlib import Path
import fastavro, pytest
from tests.test_types_real import _sql, _pipeline
from hudi_cdc.config import uri_to_path

pytestmark = [pytest.mark.postgres]

def test_probe(tmp_path, pg_database):
    from hudi_cdc.capture.capture import capture_once
    db = pg_database("probe_types")
    _sql(db, "CREATE DOMAIN money2 AS numeric(10,2)", "CREATE TYPE pair AS (a int, b text)",
         """CREATE TABLE public.typed (id int PRIMARY KEY, b8 bit(8), b1 bit(1), vb varbit(16), vb0 varbit, tsv tsvector,
         ci cidr, mac macaddr, mac8 macaddr8, pt point, bx box, ci2 circle, ln line, pth path, pg polygon, ls lseg,
         r4 int4range, rts tstzrange, rn numrange, rd daterange, dm money2, cp pair, tzarr timestamptz[], uarr uuid[],
         barr bytea[], jarr jsonb[], i8 int8range, oi oid, ch "char", nm name, tq tsquery, tmarr time[], ivarr interval[], marr money[])""",
         "INSERT INTO typed VALUES (1, B'10110001', B'1', B'101', B'0010', 'a fat cat', '10.1.0.0/16', '08:00:2b:01:02:03', "
         "'08:00:2b:01:02:03:04:05', '(1.5,2)', '((0,0),(1,1))', '<(1,2),3>', '{1,2,3}', '[(0,0),(1,1)]', '((0,0),(1,0),(1,1))', "
         "'[(0,0),(2,2)]', '[1,10)', '[2024-01-01 00:00+00,2024-02-01 00:00+00)', '(1.5,2.5]', '[2024-01-01,2024-01-10)', 12.34, ROW(1,'x'), "
         "ARRAY['2024-01-01 00:00:00.5+02'::timestamptz, NULL], ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid], ARRAY['\\x01'::bytea], "
         "ARRAY['{\"a\":1}'::jsonb], '[1,5)', 42, 'x', 'nm', 'fat & cat', ARRAY['01:02:03'::time], ARRAY['1 day'::interval], ARRAY[1.5::money])")
    p = _pipeline(tmp_path, db)
    capture_once(p, progress=print, timeout_seconds=300)
    topic = uri_to_path(p.topic_dir("typed"))
    for f in sorted(topic.glob("*.avro")):
        with open(f, "rb") as fh:
            r = fastavro.reader(fh)
            print("SCHEMA", json.dumps(r.writer_schema))
            for rec in r:
                print("REC", repr(rec))
    # streamed too
    _sql(db, "INSERT INTO typed (id, b8, vb, vb0, dm, cp, tzarr) VALUES (2, B'00000001', B'0', B'00001000', 1.5, ROW(2,'y'), ARRAY['2024-01-01 00:00:00+05'::timestamptz])")
    capture_once(p, progress=print, timeout_seconds=300)
    for f in sorted(topic.glob("*.avro"))[-1:]:
        with open(f, "rb") as fh:
            for rec in fastavro.reader(fh):
                print("REC2", repr(rec))
