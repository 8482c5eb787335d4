#!/usr/bin/env python3
"""Move hudi_cdc/ into the layered tree of ARCHITECTURE.md (issue 22), mechanically and repeatably.

    python scripts/relayout.py            # from the repository root (or anywhere: it finds it)
    python scripts/relayout.py --check    # only say what is unplaced / still to move; changes nothing

What it does, in order (each step is a no-op when already done, so running it twice changes nothing):
1. refuses to start (exit 1, listing them) if hudi_cdc/ holds a top-level module or package that the
   table below does not place: a module added since the table was written must get a line in MOVES
   (or in TOP_MODULES / TOP_PACKAGES) first;
2. turns every relative import in hudi_cdc/ absolute (``from ..storage import x`` -> ``from hudi_cdc.storage
   import x``), so a moved file's imports still point where they did;
3. ``git mv``es every file (a module that becomes a package moves to ``<name>/__init__.py``), writes the
   new packages' ``__init__.py`` and removes packages the moves emptied;
4. rewrites every reference in the tracked text files (code, tests, benchmarks, scripts, setup.cfg,
   pyproject.toml, .importlinter, docs, README.md, ARCHITECTURE.md, golden files): dotted names (also in
   strings: monkeypatch targets, ``python -m``, the CLI's lazy command table, mypy overrides),
   ``from hudi_cdc import storage`` forms (split per new parent, aliased to the old name), file paths
   (``hudi_cdc/storage.py``), and job_package.SHARED_MODULES (the job zip's module list);
5. writes the import-linter contracts of the new tree (the kernel ``common/`` and the job ``jobs/``
   import nothing else of hudi_cdc but ``errors``; no library module imports ``cli/``);
6. sorts imports (``ruff check --select I --fix``) and lists any line the longer names pushed past the
   line length (exit 1: wrap those by hand, then run it again).
Then: ``bash scripts/lint.sh`` and the tests, and commit the result as one mechanical commit.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "hudi_cdc"
SELF = Path(__file__).resolve()
# files whose old names are on purpose (this script and its test)
KEEP_AS_IS = {SELF, ROOT / "tests" / "house" / "test_relayout.py"}

# old module (dotted, below hudi_cdc) -> new module. A package key moves with everything in it.
MOVES: dict[str, str] = {
    # common/: the kernel the Spark job may import (stdlib only at import time)
    "causes": "common.causes",
    "checkpoints": "common.checkpoints",
    "instants": "common.instants",
    "lake_types": "common.lake_types",
    "properties": "common.properties",
    "s3": "common.s3",
    "spark_conf": "common.spark_conf",
    "storage": "common.storage",
    "table_types": "common.table_types",
    "text": "common.text",
    # cli/: the edge (cli.py itself becomes cli/__init__.py: BECOME_PACKAGES)
    "commands": "cli.commands",
    "output": "cli.output",
    "views": "cli.views",
    "locate": "cli.locate",
    # core/: what a job and a table are (profiles, rendered properties + argv, table locks)
    "profiles": "core.profiles",
    "render": "core.render",
    "lock": "core.lock",
    "lock_provider": "core.lock_provider",
    # pipeline/: what bootstrap, stream and add-table mean (pipeline.py becomes pipeline/__init__.py)
    "onboard": "pipeline.onboard",
    "plan": "pipeline.plan",
    # runners/: a continuous local stream kept running (pipeline/__init__.py binds the name `supervise`)
    "supervise": "runners.supervise",
    # spark/: how a JVM starts
    "launch": "spark.launch",
    # toolchain/: Java, Maven, the jar cache
    "jars": "toolchain.jars",
    "maven": "toolchain.maven",
    "java_spark": "toolchain.java_spark",
    # hive/ (hive.py becomes hive/__init__.py)
    "hive_catalog": "hive.catalog",
    "hive_sync": "hive.sync",
    # demo/ (demo.py becomes demo/__init__.py): the README's stories
    "demo_postgres": "demo.postgres",
    "capture.demo_mariadb": "demo.mariadb",
    "workspace": "demo.workspace",
    # sample/ (sample.py becomes sample/__init__.py): the MoMA sample as S3-sink files
    "sample_s3": "sample.s3",
    # lake/: the no-JVM table layer
    "reader": "lake.reader",
    "slice_merge": "lake.slice_merge",
    "status": "lake.status",
    "inspect.storage": "lake.storage",
    "inspect.table": "lake.table",
    "inspect.timeline": "lake.timeline",
    "inspect.metadata": "lake.metadata",
    # beside their package
    "local_stack": "stack.local",
    "subjects": "registry.subjects",
    "session": "query.session",
    "engines.deltastreamer": "runners.deltastreamer",
}
# top-level modules that become a package of the same name (x.py -> x/__init__.py; dotted names unchanged)
BECOME_PACKAGES = ("cli", "pipeline", "hive", "demo", "sample")
# packages the moves empty (only __init__.py left): removed
REMOVE_PACKAGES = ("engines",)
# what may stay at the top of hudi_cdc/ afterwards
TOP_MODULES = ("__init__", "errors", "http", "job_package")
TOP_PACKAGES = ("cli", "common", "config", "core", "pipeline", "spark", "toolchain", "hive", "demo", "sample", "lake",
                "capture", "inspect", "query", "report", "sinks", "registry", "stack", "runners", "jobs",
                "data", "templates", "sources", "connect")
# the kernel: what the Spark job (jobs/) may import besides itself
KERNEL = ("common", "errors")
NEW_PACKAGE_DOCS = {
    "common": "The kernel: stdlib-only modules the Spark job imports too (job_package zips them; .importlinter "
              "keeps them from importing anything above).",
    "core": "What a job and a table are: version profiles, rendered properties and spark-submit argv, table locks.",
    "spark": "How hudi-cdc starts a Spark JVM (spark-submit): one launcher.",
    "toolchain": "Java, Spark's spark-submit, Maven artifacts and the jar cache.",
    "lake": "The no-JVM table layer: table, timeline and commit metadata readers, hudi-rs reads, status.",
}
TEXT_SUFFIXES = {".py", ".md", ".cfg", ".toml", ".txt", ".sh", ".j2", ".yaml", ".yml", ".json", ".ini",
                 ".properties", ".importlinter", ""}
IMPORTLINTER_CONTRACTS = """[importlinter:contract:cli-edge]
name = Library modules never import the CLI layer (hudi_cdc.cli)
type = forbidden
source_modules =
    hudi_cdc.*
forbidden_modules =
    hudi_cdc.cli
ignore_imports =
    hudi_cdc.cli.** -> hudi_cdc.**

[importlinter:contract:kernel]
name = The kernel (common/, errors) and the Spark job (jobs/) import nothing else of hudi_cdc
type = forbidden
source_modules =
{sources}
forbidden_modules =
{forbidden}
"""


class Unplaced(SystemExit):
    pass


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def new_name(mod: str) -> str:
    """The new dotted name (below hudi_cdc) of an old module, package, or anything inside one."""
    parts = mod.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        if head in MOVES:
            return ".".join([MOVES[head], *parts[i:]])
    return mod


def check_table() -> None:
    keys = set(MOVES)
    for key, target in MOVES.items():
        for other in keys:  # a key reused as (a prefix of) a target would make a second run move it again
            if target == other or target.startswith(other + "."):
                raise SystemExit(f"relayout table: {key} -> {target} reuses the old name {other}")
    if keys & set(BECOME_PACKAGES):
        raise SystemExit(f"relayout table: {sorted(keys & set(BECOME_PACKAGES))} both moved and kept")


def unplaced() -> list[str]:
    """Top-level entries of hudi_cdc/ the table does not place (new modules from other branches)."""
    out = []
    for p in sorted(PKG.iterdir()):
        if p.name in ("__pycache__", "py.typed") or p.name.endswith(".egg-info"):
            continue
        if p.is_dir():
            if not (p / "__init__.py").exists() and not any(p.rglob("*.py")):
                continue  # not a package (e.g. an empty folder left by a move)
            name = p.name
            ok = name in TOP_PACKAGES or name in MOVES or name in REMOVE_PACKAGES
        elif p.suffix == ".py":
            name = p.stem
            ok = name in TOP_MODULES or name in MOVES or name in BECOME_PACKAGES
        else:
            continue
        if not ok:
            out.append(p.relative_to(ROOT).as_posix())
    return out


def module_path(mod: str) -> Path:
    """The file or folder of a dotted module below hudi_cdc, whichever exists (else the .py path)."""
    base = PKG.joinpath(*mod.split("."))
    return base if base.is_dir() else base.with_suffix(".py")


# ---- step 2: relative imports -> absolute --------------------------------------------------------------
REL_IMPORT = re.compile(r"^(?P<indent>[ \t]*)from (?P<dots>\.+)(?P<rest>[\w.]*) import ", re.M)


def absolutize(path: Path) -> bool:
    text = path.read_text()
    rel = path.relative_to(ROOT).with_suffix("")
    package = list(rel.parts[:-1])  # the package a module (or __init__) lives in

    def repl(m: re.Match[str]) -> str:
        up = len(m["dots"]) - 1
        if up >= len(package):
            raise SystemExit(f"{path}: relative import above the top package: {m.group(0).strip()}")
        base = package[: len(package) - up]
        target = ".".join(base + ([m["rest"]] if m["rest"] else []))
        return f"{m['indent']}from {target} import "

    new = REL_IMPORT.sub(repl, text)
    if new != text:
        path.write_text(new)
        return True
    return False


# ---- step 3: moves ---------------------------------------------------------------------------------------
def ensure_package(folder: Path, created: list[str]) -> None:
    rel = folder.relative_to(PKG)
    for i in range(1, len(rel.parts) + 1):
        pkg = PKG.joinpath(*rel.parts[:i])
        pkg.mkdir(exist_ok=True)
        init = pkg / "__init__.py"
        if not init.exists():
            doc = NEW_PACKAGE_DOCS.get(".".join(rel.parts[:i]), "")
            init.write_text('"""' + textwrap.fill(doc, 110) + '"""\n' if doc else "")
            git("add", str(init))
            created.append(init.relative_to(ROOT).as_posix())


def move_all() -> list[str]:
    done: list[str] = []
    for name in BECOME_PACKAGES:
        src, dst = PKG / f"{name}.py", PKG / name / "__init__.py"
        if src.exists():
            if dst.exists():
                raise SystemExit(f"cannot move {src.relative_to(ROOT)}: {dst.relative_to(ROOT)} exists")
            (PKG / name).mkdir(exist_ok=True)
            git("mv", str(src), str(dst))
            done.append(f"{src.relative_to(ROOT)} -> {dst.relative_to(ROOT)}")
    for old, new in sorted(MOVES.items(), key=lambda kv: kv[0].count(".")):
        src = module_path(old)
        if not src.exists():
            continue
        dst = PKG.joinpath(*new.split("."))
        if not src.is_dir():
            dst = dst.with_suffix(".py")
        if dst.exists():
            raise SystemExit(f"cannot move {src.relative_to(ROOT)}: {dst.relative_to(ROOT)} exists")
        ensure_package(dst.parent, done)
        git("mv", str(src), str(dst))
        done.append(f"{src.relative_to(ROOT)} -> {dst.relative_to(ROOT)}")
    for name in REMOVE_PACKAGES:
        folder = PKG / name
        if not folder.exists():
            continue
        left = [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        if [p.name for p in left] != ["__init__.py"]:
            raise SystemExit(f"{folder.relative_to(ROOT)} still holds {[str(p.relative_to(ROOT)) for p in left]}: "
                             "place them in MOVES")
        git("rm", "-q", str(folder / "__init__.py"))
        if folder.exists():
            shutil.rmtree(folder)  # only __pycache__ left
        done.append(f"removed {folder.relative_to(ROOT)}/")
    main_py = PKG / "cli" / "__main__.py"
    if (PKG / "cli" / "__init__.py").exists() and not main_py.exists():
        main_py.write_text('"""``python -m hudi_cdc.cli``."""\n\nfrom hudi_cdc.cli import run\n\n'
                           'if __name__ == "__main__":\n    run()\n')
        git("add", str(main_py))
        done.append(main_py.relative_to(ROOT).as_posix())
    return done


def shadowed() -> list[str]:
    """Names a package's __init__.py binds that are also its submodules' names, where the move made them
    meet (a module turned package, a module moved in): ``hudi_cdc.pkg.name`` would then be the object, not
    the module (monkeypatch targets, ``import ... as``)."""
    out = []
    for init in sorted(PKG.rglob("__init__.py")):
        if "__pycache__" in init.parts or init.parent.is_symlink():
            continue
        children = {p.stem for p in init.parent.glob("*.py")} | {p.name for p in init.parent.iterdir()
                                                                 if (p / "__init__.py").exists()}
        bound: set[str] = set()
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.Assign):
                bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        pkg = init.parent.relative_to(ROOT).as_posix()
        for name in sorted(bound & (children - {"__init__", "__main__"})):
            sub = PKG.joinpath(*init.parent.relative_to(PKG).parts, name)
            obj = f"{pkg}/{name}{'' if sub.is_dir() else '.py'}"
            dotted_child = ".".join((*init.parent.relative_to(PKG).parts, name))
            made_here = init.parent.name in BECOME_PACKAGES or dotted_child in MOVES.values()
            if made_here and not _imports_own_child(init, name):
                out.append(f"{pkg}/__init__.py binds {name!r}, the name of its submodule {obj}")
    return out


def _imports_own_child(init: Path, name: str) -> bool:
    """``from hudi_cdc.pkg import name`` (the submodule itself) is no shadowing."""
    dotted_pkg = ".".join(init.parent.relative_to(ROOT).parts)
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module == dotted_pkg:
            if any(a.name == name and (a.asname or a.name) == name for a in node.names):
                return True
    return False


# ---- step 4: references ---------------------------------------------------------------------------------
FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from hudi_cdc(?P<mod>(?:\.\w+)*) import (?P<names>\([^)]*\)|[^\n]*)", re.M)


def _split_names(raw: str) -> list[tuple[str, str | None]] | None:
    body = raw.strip()
    if body.startswith("("):
        body = body[1:-1]
    if "#" in body or "\\" in body:
        return None
    out = []
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        parts = item.split()
        if len(parts) == 3 and parts[1] == "as":
            out.append((parts[0], parts[2]))
        elif len(parts) == 1:
            out.append((parts[0], None))
        else:
            return None
    return out


def rewrite_from_imports(text: str, where: str) -> str:
    def repl(m: re.Match[str]) -> str:
        mod = m["mod"][1:]
        raw = m["names"]
        comment = ""
        if not raw.lstrip().startswith("(") and "#" in raw:
            raw, comment = raw.split("#", 1)
            comment = "  #" + comment
        names = _split_names(raw)
        new_mod = new_name(mod) if mod else ""
        if names is None:
            if any((f"{mod}.{n}" if mod else n) in MOVES for n in re.findall(r"\w+", raw)):
                raise SystemExit(f"{where}: cannot rewrite this import, split it by hand: {m.group(0)!r}")
            return m.group(0).replace(f"from hudi_cdc{m['mod']} import", f"from {dotted(new_mod)} import", 1)
        groups: dict[str, list[str]] = {}
        for name, alias in names:
            full = f"{mod}.{name}" if mod else name
            if full in MOVES:
                parent, _, leaf = MOVES[full].rpartition(".")
                alias = alias or (name if leaf != name else None)
                groups.setdefault(parent, []).append(leaf + (f" as {alias}" if alias else ""))
            else:
                groups.setdefault(new_mod, []).append(name + (f" as {alias}" if alias else ""))
        if list(groups) == [new_mod]:  # only the module moved: keep the statement's own layout
            return m.group(0).replace(f"from hudi_cdc{m['mod']} import", f"from {dotted(new_mod)} import", 1)
        lines = [f"{m['indent']}from {dotted(parent)} import {', '.join(items)}" for parent, items in groups.items()]
        return "\n".join(lines) + comment

    return FROM_IMPORT.sub(repl, text)


def dotted(mod: str) -> str:
    return f"hudi_cdc.{mod}" if mod else "hudi_cdc"


def _alternation(keys: list[str]) -> str:
    return "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))


DOTTED = re.compile(r"(?<![\w.])hudi_cdc\.(?P<mod>" + _alternation(list(MOVES)) + r")(?!\w)")


def _path_map() -> dict[str, str]:
    out = {}
    for old, new in MOVES.items():
        o, n = old.replace(".", "/"), new.replace(".", "/")
        out[f"{o}.py"] = f"{n}.py"
        out[o] = n  # a package folder (or a module named without .py)
    for name in BECOME_PACKAGES:
        out[f"{name}.py"] = f"{name}/__init__.py"
    return out


PATHS = _path_map()
PATH_RE = re.compile(r"(?<![\w.])hudi_cdc/(?P<p>" + _alternation(list(PATHS)) + r")(?![\w])")
BARE_PATHS = {"engines/deltastreamer": "runners/deltastreamer"}
BARE_RE = re.compile(r"(?<![\w/.])(?P<p>" + _alternation(list(BARE_PATHS)) + r")(?![\w])")


def rewrite_references(text: str, where: str) -> str:
    text = rewrite_from_imports(text, where)
    text = DOTTED.sub(lambda m: f"hudi_cdc.{MOVES[m['mod']]}", text)
    text = PATH_RE.sub(lambda m: f"hudi_cdc/{PATHS[m['p']]}", text)
    return BARE_RE.sub(lambda m: BARE_PATHS[m["p"]], text)


SHARED = re.compile(r"SHARED_MODULES = \((?P<body>[^)]*)\)")


def rewrite_shared_modules(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        mods = ast.literal_eval("(" + m["body"] + ")")
        new = sorted({new_name(x) for x in mods})
        stray = [x for x in new if x.split(".")[0] not in KERNEL]
        if stray:
            raise SystemExit(f"hudi_cdc/job_package.py: SHARED_MODULES {stray} would live outside the kernel "
                             f"{KERNEL}: place them under common/")
        lines, line = [], "SHARED_MODULES = ("
        for x in new:
            item = f'"{x}", '
            if len(line) + len(item) > 118:
                lines.append(line.rstrip())
                line = " " * len("SHARED_MODULES = (")
            line += item
        lines.append(line.rstrip().rstrip(",") + ")")
        return "\n".join(lines)

    return SHARED.sub(repl, text, count=1)


COMMAND_LINE = re.compile(r'^(?P<head>\s*"[\w-]+": \()(?P<spec>"[\w.]+", "\w+",) (?P<help>".*"\),)$', re.M)


def wrap_command_table(text: str) -> str:
    """The CLI's lazy command table: an entry the longer module name pushed past 120 wraps its help."""
    def repl(m: re.Match[str]) -> str:
        if len(m.group(0)) <= 120:
            return m.group(0)
        return f"{m['head']}{m['spec']}\n{' ' * len(m['head'])}{m['help']}"

    return COMMAND_LINE.sub(repl, text)


QUOTED_LINE = re.compile(r'^(?P<indent>[ \t]+)(?P<items>"[^"\n]*"(?:, *"[^"\n]*")*),?[ \t]*$', re.M)


def wrap_quoted_lists(text: str, width: int = 116) -> str:
    """A line of quoted list items (pyproject.toml's mypy module lists) the longer names pushed past the
    line length, wrapped at ``width``."""
    def repl(m: re.Match[str]) -> str:
        if len(m.group(0)) <= 120:
            return m.group(0)
        lines, line = [], m["indent"]
        for item in re.findall(r'"[^"]*"', m["items"]):
            if line.strip() and len(line) + len(item) + 2 > width:
                lines.append(line.rstrip())
                line = m["indent"]
            line += item + ", "
        lines.append(line.rstrip())
        return "\n".join(lines)

    return QUOTED_LINE.sub(repl, text)


def tracked_text_files() -> list[Path]:
    out = []
    for rel in git("ls-files", "-z").split("\0"):
        if not rel:
            continue
        p = ROOT / rel
        if p.resolve() in KEEP_AS_IS or p.is_symlink() or not p.is_file() or rel.startswith("hudi_cdc/data/"):
            continue
        if p.suffix in TEXT_SUFFIXES or p.name in (".importlinter", "Dockerfile"):
            out.append(p)
    return out


def rewrite_all() -> list[str]:
    changed = []
    for p in tracked_text_files():
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        new = rewrite_references(text, p.relative_to(ROOT).as_posix())
        if p == PKG / "job_package.py":
            new = rewrite_shared_modules(new)
        if p == PKG / "cli" / "__init__.py":
            new = wrap_command_table(new)
        if p == ROOT / "pyproject.toml":
            new = wrap_quoted_lists(new)
        if new != text:
            p.write_text(new)
            changed.append(p.relative_to(ROOT).as_posix())
    return changed


# ---- step 5: import-linter contracts --------------------------------------------------------------------
def contracts() -> str:
    tops = sorted({p.stem if p.suffix == ".py" else p.name for p in PKG.iterdir()
                   if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()})
    kernel = [*KERNEL, "jobs"]
    sources = "\n".join(f"    hudi_cdc.{t}" for t in sorted(kernel))
    forbidden = "\n".join(f"    hudi_cdc.{t}" for t in tops if t not in kernel)
    return IMPORTLINTER_CONTRACTS.format(sources=sources, forbidden=forbidden)


def write_contracts() -> bool:
    path = ROOT / ".importlinter"
    text = path.read_text()
    blocks = re.split(r"(?m)^(?=\[)", text)
    keep = [b for b in blocks if not re.match(r"\[importlinter:contract:(cli-edge|kernel)\]", b)]
    new = "".join(keep).rstrip("\n") + "\n\n" + contracts()
    if new != text:
        path.write_text(new)
        return True
    return False


# ---- step 6: import order, line length ------------------------------------------------------------------
def ruff_fix() -> list[str]:
    dirs = [d for d in ("hudi_cdc", "tests", "benchmarks", "scripts") if (ROOT / d).exists()]
    subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "I", "--fix", "--quiet", *dirs],
                   cwd=ROOT, check=False)
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "E501", "--output-format",
                          "concise", *dirs], cwd=ROOT, capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if "E501" in line]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report unplaced modules and pending moves")
    args = ap.parse_args(argv)
    check_table()
    missing = unplaced()
    if missing:
        print("relayout: these top-level modules of hudi_cdc/ have no place in scripts/relayout.py's table "
              "(add them to MOVES, TOP_MODULES or TOP_PACKAGES):", file=sys.stderr)
        for m in missing:
            print(f"  {m}", file=sys.stderr)
        return 1
    pending = [m for m in MOVES if module_path(m).exists()] + [m for m in BECOME_PACKAGES
                                                                if (PKG / f"{m}.py").exists()]
    if args.check:
        print(f"relayout: every module placed; {len(pending)} still to move: {' '.join(pending) or '-'}")
        return 0
    absolutized = [p for p in sorted(PKG.rglob("*.py")) if "__pycache__" not in p.parts and absolutize(p)]
    moved = move_all()
    changed = rewrite_all()
    linted = write_contracts()
    too_long = ruff_fix()
    clashes = shadowed()
    print(f"relayout: {len(absolutized)} files with relative imports made absolute, {len(moved)} moves, "
          f"{len(changed)} files rewritten, .importlinter {'updated' if linted else 'unchanged'}")
    for line in moved:
        print(f"  {line}")
    left = [p for p in (PKG.iterdir()) if p.suffix == ".py"]
    print(f"relayout: top level of hudi_cdc/ now: {' '.join(sorted(p.name for p in left))}")
    if clashes:
        print("relayout: a package binds a name its submodule has (rename one, or move the module):",
              file=sys.stderr)
        for line in clashes:
            print(f"  {line}", file=sys.stderr)
        return 1
    if too_long:
        print("relayout: lines now over the line length (wrap them by hand, then run again):", file=sys.stderr)
        for line in too_long:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
