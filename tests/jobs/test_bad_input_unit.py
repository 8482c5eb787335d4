"""The bad-input checks the streamer job makes before Spark touches a table, and the registry
client's answer to each registry failure (no JVM; tests/jobs/test_bad_input.py runs them through the CLI)."""

from __future__ import annotations

import copy
import http.server
import json
import threading

import fastavro
import pytest

from hudi_cdc import sample
from hudi_cdc.errors import DataError, EnvironmentProblem, JobError, RegistryError
from hudi_cdc.jobs.stream import errors as job_errors
from hudi_cdc.jobs.stream.files import validate_avro_files
from hudi_cdc.jobs.stream.schema_registry import registry_schema
from hudi_cdc.registry.errors import RegistryUnavailable
from hudi_cdc.runners.local.runner import _job_error
from hudi_cdc.runners.supervise import RESTARTABLE

SCHEMA = sample.schema("artists")
KEYS = ["artist_id"]


def nullable_key_schema() -> dict:
    s = copy.deepcopy(SCHEMA)
    s["fields"][0] = {"name": "artist_id", "type": ["null", "int"], "default": None}
    return s


def row(aid, lsn=1) -> dict:
    return {"artist_id": aid, "name": "n", "__lsn": lsn, "__deleted": "false"}


def avro(path, records, schema=SCHEMA):
    with open(path, "wb") as fh:
        fastavro.writer(fh, fastavro.parse_schema(schema), records)
    return (str(path), 0, path.stat().st_size)


def check(files, reader_schema=None):
    return validate_avro_files(files, KEYS + ["__lsn"], KEYS, reader_schema)


def test_null_or_empty_record_key_names_the_file_record_and_field(tmp_path):
    f = avro(tmp_path / "k.avro", [row(1), {**row(None), "name": "no key"}], nullable_key_schema())
    with pytest.raises(job_errors.JobInputError, match=r"record 1 of .*k\.avro has no record key: artist_id"):
        check([f])
    # composite keys: a record whose key fields are ALL null or empty is what Hudi's key generators refuse
    assert validate_avro_files([f], ["artist_id"], ["name", "artist_id"])
    g = avro(tmp_path / "g.avro", [{**row(None), "name": ""}], nullable_key_schema())
    with pytest.raises(job_errors.JobInputError, match=r"record 0 of .*g\.avro has no record key: name, artist_id"):
        validate_avro_files([g], ["artist_id"], ["name", "artist_id"])
    assert check([avro(tmp_path / "ok.avro", [row(1)], nullable_key_schema())])


def test_empty_files(tmp_path):
    zero = tmp_path / "zero.avro"
    zero.write_bytes(b"")
    with pytest.raises(job_errors.JobInputError, match=r"empty \(0-byte\) Avro file .*zero\.avro"):
        check([(str(zero), 0, 0)])
    header_only = avro(tmp_path / "h.avro", [])  # a schema and no records: valid, adds nothing
    assert check([header_only])[0][0] == header_only[0]


def test_vanished_file(tmp_path):
    with pytest.raises(job_errors.JobInputError, match=r"landing file .*gone\.avro vanished between listing"):
        check([(str(tmp_path / "gone.avro"), 0, 10)])


def test_schema_that_disagrees_with_the_registry(tmp_path):
    f = avro(tmp_path / "f.avro", [row(1)])
    registry = copy.deepcopy(SCHEMA)
    registry["fields"][1] = {"name": "name", "type": "int"}  # name: string in the file, int in the registry
    with pytest.raises(job_errors.JobInputError, match=r"the schema of .*f\.avro disagrees with the registry's"):
        check([f], registry)
    assert check([f], SCHEMA)


class _Registry(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):  # noqa: N802 (http.server's name)
        body = json.dumps({"schema": json.dumps(SCHEMA)} if self.status == 200 else
                          {"error_code": self.status, "message": "no"}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def registry():
    """A stand-in HTTP server for the registry URL: it tests OUR client's answer to a status."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("status, cls", [(401, job_errors.RegistryReadError), (403, job_errors.RegistryReadError),
                                         (404, job_errors.RegistryReadError), (503, job_errors.RegistryDown)])
def test_registry_statuses(registry, status, cls):
    url = f"http://127.0.0.1:{registry.server_port}/subjects/t-value/versions/latest"
    _Registry.status = status
    try:
        with pytest.raises(cls, match=f"HTTP {status}") as err:
            registry_schema(url)
    finally:
        _Registry.status = 200
    assert type(err.value) is cls and "\n" not in str(err.value)
    assert json.loads(registry_schema(url)) == SCHEMA


def test_registry_down(registry):
    url = f"http://127.0.0.1:{registry.server_port}/subjects/t-value/versions/latest"
    registry.shutdown()
    registry.server_close()
    with pytest.raises(job_errors.RegistryDown, match="could not be reached"):
        registry_schema(url)


def test_each_kind_has_its_error_and_exit_code(tmp_path):
    log = tmp_path / "x.log"
    made = {kind: _job_error({"message": "m", "kind": kind}, "l", "m", [], log)
            for kind in ("input", "registry", "registry_unavailable", "disk", "job")}
    assert {k: (type(e), e.exit_code) for k, e in made.items()} == {
        "input": (DataError, 3), "registry": (RegistryError, 7), "registry_unavailable": (RegistryUnavailable, 7),
        "disk": (EnvironmentProblem, 5), "job": (JobError, 4)}
    # a JVM that died of a full disk without saying so
    assert type(_job_error(None, "l", "x", ["java.io.IOException: No space left on device"], log)) is EnvironmentProblem
    # a continuous stream waits for a registry that went away, not for refused credentials or a full disk
    assert isinstance(made["registry_unavailable"], RESTARTABLE)
    assert not isinstance(made["registry"], RESTARTABLE) and not isinstance(made["disk"], RESTARTABLE)


def test_disk_full_is_found_in_the_chain():
    try:
        try:
            raise OSError(28, "No space left on device")
        except OSError as inner:
            raise RuntimeError("Hudi write failed") from inner
    except RuntimeError as exc:
        assert job_errors.is_disk_full(exc)
    assert not job_errors.is_disk_full(RuntimeError("other"))
