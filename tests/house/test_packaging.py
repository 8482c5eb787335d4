"""What setup.cfg installs: every package under hudi_cdc/ (``packages = find:``), the templates as
hudi_cdc.templates, and every template and sample file as package data, so a module or template added
later is never missing from the wheel ("No such command")."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from setuptools.config.setupcfg import read_configuration

ROOT = Path(__file__).resolve().parents[2]


def _options() -> dict:
    cwd = os.getcwd()
    os.chdir(ROOT)  # find: runs relative to the project folder
    try:
        return read_configuration(str(ROOT / "setup.cfg"))["options"]
    finally:
        os.chdir(cwd)


def _package_dirs() -> set[str]:
    out = set()
    for root, dirs, files in os.walk(ROOT / "hudi_cdc", followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if "__init__.py" in files:
            out.add(Path(root).relative_to(ROOT).as_posix().replace("/", "."))
    return out


def test_every_package_under_hudi_cdc_is_installed():
    packages = set(_options()["packages"])
    on_disk = _package_dirs()
    assert {"hudi_cdc", "hudi_cdc.templates", "hudi_cdc.jobs.stream", "hudi_cdc.runners.aws"} <= on_disk
    assert packages == on_disk
    assert not any(p == "templates" or p.startswith(("tests", "benchmarks")) for p in packages)


def test_templates_are_the_repositorys_folder():
    link = ROOT / "hudi_cdc" / "templates"
    assert link.resolve() == (ROOT / "templates").resolve()
    import hudi_cdc.templates

    assert [Path(p).resolve() for p in hudi_cdc.templates.__path__] == [(ROOT / "templates").resolve()]


def test_package_data_covers_every_template_and_sample_file():
    data = _options()["package_data"]
    for package, folder, suffixes in (("hudi_cdc.templates", ROOT / "templates", (".j2",)),
                                      ("hudi_cdc.data", ROOT / "hudi_cdc" / "data", None)):
        files = [p.relative_to(folder).as_posix() for p in folder.rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".py"
                 and (suffixes is None or p.suffix in suffixes)]
        assert files
        missing = [f for f in files if not any(fnmatch.fnmatch(f, pat) for pat in data[package])]
        assert missing == [], f"{package}: not installed"
