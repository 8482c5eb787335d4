"""Every exit code in one enum (hudi_cdc.errors.ExitCode), with the numbers users and scripts know, used by
every error class and by the streamer job."""

from __future__ import annotations

import importlib
import pkgutil

import hudi_cdc
from hudi_cdc.errors import ExitCode, HudiCdcError

DOCUMENTED = {"OK": 0, "FAILED": 1, "CONFIG": 2, "DATA": 3, "JOB": 4, "ENVIRONMENT": 5, "TABLE_STATE": 6,
              "REGISTRY": 7, "AWS": 8, "HIVE": 9, "DIFFERS": 10, "SOURCE": 11, "LOCKED": 12, "INTERRUPTED": 130}
# modules that need an extra or a JVM-side package to import; their error classes are checked where they live
SKIP_IMPORT = ("hudi_cdc.capture.engine", "hudi_cdc.jobs.streamer", "hudi_cdc.templates")


def _all_error_classes() -> list[type]:
    for mod in pkgutil.walk_packages(hudi_cdc.__path__, "hudi_cdc."):
        if not mod.name.startswith(SKIP_IMPORT):
            importlib.import_module(mod.name)
    out, todo = [], [HudiCdcError]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return out


def test_the_numbers_do_not_change():
    assert {c.name: int(c) for c in ExitCode} == DOCUMENTED


def test_every_error_class_takes_its_code_from_the_enum():
    classes = _all_error_classes()
    names = {c.__name__ for c in classes}
    assert {"HiveError", "TablesDiffer", "ConnectRequestError", "TableLocked", "JobFailed"} <= names
    for cls in classes:
        assert isinstance(cls.exit_code, ExitCode), f"{cls.__module__}.{cls.__name__}: {cls.exit_code!r}"
    by_name = {c.__name__: c.exit_code for c in classes}
    assert by_name["HiveError"] == 9 and by_name["TablesDiffer"] == 10 and by_name["TableLocked"] == 12
    assert by_name["ConnectRequestError"] == ExitCode.ENVIRONMENT and by_name["JobFailed"] == ExitCode.AWS


def test_the_streamer_job_exits_with_the_enum(capsys):
    """Bad arguments: the job says so on its error line and exits CONFIG, before any Spark session."""
    from hudi_cdc.jobs.stream.main import ERROR_MARK, main

    code = main(["--no-such-flag"])
    assert code == ExitCode.CONFIG and isinstance(code, ExitCode)
    out = capsys.readouterr().out
    assert ERROR_MARK + '{"message": "bad streamer arguments: --no-such-flag"}' in out
