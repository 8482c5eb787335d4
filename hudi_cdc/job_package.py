"""hudi-cdc's streamer job as files a cluster runs: the job file (hudi_cdc/jobs/streamer.py, what
spark-submit runs) and a zip of exactly the modules it imports, for ``--py-files``.

The zip is deterministic (sorted entries, fixed timestamps and modes), so the same sources give the
same bytes and an unchanged upload. The modules are the job package (hudi_cdc/jobs/stream/) and the
stdlib-only shared modules it imports; tests/runners/test_emr_engine.py checks this list against what
``import hudi_cdc.jobs.streamer`` really loads. The cluster's Python also needs fastavro and hudi
(hudi-rs): docs/emr.md and emr/bootstrap-hudi-cdc-job.sh.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

JOB_SCRIPT_NAME = "streamer.py"
JOB_ZIP_NAME = "hudi_cdc_job.zip"
# What the job imports besides hudi_cdc.jobs.*: stdlib-only modules shared with the CLI side (dotted names
# below hudi_cdc; scripts/relayout.py rewrites them when modules move).
SHARED_MODULES = ("common.causes", "common.checkpoints", "common.instants", "common.lake_types",
                  "common.lake_types_sql", "common.properties", "common.py4j_lookups", "common.reader_keys",
                  "common.routing", "common.s3", "common.shaping", "common.spark_conf", "common.storage",
                  "errors")
# the Python packages the job needs on the cluster (pinned like setup.cfg)
JOB_REQUIREMENTS = ("fastavro>=1.9", "hudi==0.5.0", "javaproperties>=0.8")  # javaproperties: hoodie.properties (keyloc)
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry


def _package_root() -> Path:
    return Path(__file__).resolve().parent


def job_script_path() -> Path:
    return _package_root() / "jobs" / JOB_SCRIPT_NAME


def job_members() -> list[tuple[str, Path]]:
    """(name in the zip, source file) of every module the job imports, sorted by name."""
    root = _package_root()
    files = [root / "__init__.py", root / "jobs" / "__init__.py", job_script_path()]
    files += sorted((root / "jobs" / "stream").glob("*.py"))
    for m in SHARED_MODULES:  # dotted below hudi_cdc ("common.storage"), with its packages' __init__.py
        parts = m.split(".")
        files += [root.joinpath(*parts[:i], "__init__.py") for i in range(1, len(parts))]
        files.append(root.joinpath(*parts[:-1], f"{parts[-1]}.py"))
    return sorted({(f"hudi_cdc/{f.relative_to(root).as_posix()}", f) for f in files})


def job_zip() -> bytes:
    """The ``--py-files`` zip: the job's modules, byte-for-byte the same for the same sources."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, path in job_members():
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # unix, whatever the building machine
            zf.writestr(info, path.read_bytes())
    return buf.getvalue()


def job_files() -> dict[str, bytes]:
    """{file name: bytes} of what a cluster needs to run the job: the job file and the zip."""
    return {JOB_SCRIPT_NAME: job_script_path().read_bytes(), JOB_ZIP_NAME: job_zip()}


def write_job_files(out_dir: Path) -> list[Path]:
    """Write the job file and the zip under out_dir (unchanged files left untouched)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in job_files().items():
        path = out_dir / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        written.append(path)
    return written
