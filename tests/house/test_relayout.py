"""scripts/relayout.py, the package re-layout (issue 22): every top-level module of hudi_cdc/ has a place in
its table (a new one fails loudly), and its rewrites of imports, dotted names and paths are right and
idempotent. The old names below are on purpose (the script leaves this file alone)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "relayout.py"


@pytest.fixture(scope="module")
def relayout():
    spec = importlib.util.spec_from_file_location("relayout", SCRIPT)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_top_level_module_has_a_place():
    """A module added at the top of hudi_cdc/ must get a line in the script's table (or its top level)."""
    out = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "every module placed" in out.stdout


def test_an_unplaced_module_is_named(relayout, tmp_path, monkeypatch):
    pkg = tmp_path / "hudi_cdc"
    (pkg / "capture").mkdir(parents=True)
    for f in ("__init__.py", "errors.py", "storage.py", "brand_new.py", "capture/__init__.py"):
        (pkg / f).write_text("")
    (pkg / "newpkg").mkdir()
    (pkg / "newpkg" / "__init__.py").write_text("")
    monkeypatch.setattr(relayout, "ROOT", tmp_path)
    monkeypatch.setattr(relayout, "PKG", pkg)
    assert relayout.unplaced() == ["hudi_cdc/brand_new.py", "hudi_cdc/newpkg"]
    assert relayout.main([]) == 1


def test_from_imports_split_per_new_parent(relayout):
    text = ("from hudi_cdc import __version__, storage, s3 as s3mod, jars as jarcache, pipeline as pipe\n"
            "    from hudi_cdc.inspect import storage, Table\n"
            "from hudi_cdc.commands.core import (\n    init_cmd,\n    render_cmd,\n)\n"
            "from hudi_cdc import hive_catalog\n")
    assert relayout.rewrite_references(text, "t.py") == (
        "from hudi_cdc import __version__, pipeline as pipe\n"
        "from hudi_cdc.common import storage, s3 as s3mod\n"
        "from hudi_cdc.toolchain import jars as jarcache\n"
        "    from hudi_cdc.lake import storage\n"
        "    from hudi_cdc.inspect import Table\n"
        "from hudi_cdc.cli.commands.core import (\n    init_cmd,\n    render_cmd,\n)\n"
        "from hudi_cdc.hive import catalog as hive_catalog\n")


def test_dotted_names_and_paths_even_in_strings(relayout):
    text = ('monkeypatch.setattr("hudi_cdc.storage.land", f)  # hudi_cdc.storages stays\n'
            '[sys.executable, "-m", "hudi_cdc.engines.deltastreamer.runtime"]\n'
            "see hudi_cdc/storage.py, hudi_cdc/cli.py, hudi_cdc/commands/core.py and engines/deltastreamer/\n"
            "import hudi_cdc.inspect.table as t; hudi_cdc.config.Pipeline; hudi_cdc.hive.HiveClient\n")
    new = relayout.rewrite_references(text, "t.py")
    assert new == ('monkeypatch.setattr("hudi_cdc.common.storage.land", f)  # hudi_cdc.storages stays\n'
                   '[sys.executable, "-m", "hudi_cdc.runners.deltastreamer.runtime"]\n'
                   "see hudi_cdc/common/storage.py, hudi_cdc/cli/__init__.py, hudi_cdc/cli/commands/core.py and "
                   "runners/deltastreamer/\n"
                   "import hudi_cdc.lake.table as t; hudi_cdc.config.Pipeline; hudi_cdc.hive.HiveClient\n")
    assert relayout.rewrite_references(new, "t.py") == new  # idempotent


def test_shared_modules_move_into_the_kernel(relayout):
    text = 'SHARED_MODULES = ("causes", "errors", "storage")\n'
    assert relayout.rewrite_shared_modules(text) == 'SHARED_MODULES = ("common.causes", "common.storage", "errors")\n'
    with pytest.raises(SystemExit, match="outside the kernel"):
        relayout.rewrite_shared_modules('SHARED_MODULES = ("reader",)\n')


def test_relative_imports_made_absolute(relayout, tmp_path, monkeypatch):
    pkg = tmp_path / "hudi_cdc" / "runners" / "local"
    pkg.mkdir(parents=True)
    f = pkg / "runner.py"
    f.write_text("from ... import jars as jarcache\nfrom ..base import NotSupported\n    from .plan import x\n")
    monkeypatch.setattr(relayout, "ROOT", tmp_path)
    assert relayout.absolutize(f)
    assert f.read_text() == ("from hudi_cdc import jars as jarcache\nfrom hudi_cdc.runners.base import NotSupported\n"
                             "    from hudi_cdc.runners.local.plan import x\n")
    assert not relayout.absolutize(f)


def test_a_package_binding_its_submodules_name_is_caught(relayout, tmp_path, monkeypatch):
    """pipeline.py became pipeline/__init__.py: had supervise.py moved in beside it, the function it imports
    (``supervise``) would hide the module ``hudi_cdc.pipeline.supervise`` from monkeypatch and ``import as``."""
    pkg = tmp_path / "hudi_cdc" / "pipeline"
    pkg.mkdir(parents=True)
    (tmp_path / "hudi_cdc" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from hudi_cdc.pipeline.supervise import supervise\n"
                                     "from hudi_cdc.pipeline import plan\n")
    (pkg / "supervise.py").write_text("def supervise(): pass\n")
    (pkg / "plan.py").write_text("")
    monkeypatch.setattr(relayout, "ROOT", tmp_path)
    monkeypatch.setattr(relayout, "PKG", tmp_path / "hudi_cdc")
    assert relayout.shadowed() == ["hudi_cdc/pipeline/__init__.py binds 'supervise', the name of its submodule "
                                   "hudi_cdc/pipeline/supervise.py"]
