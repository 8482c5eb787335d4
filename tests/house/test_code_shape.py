"""Small modules with one job: no module over 400 lines, no function over 80 (issue 22). The allow-lists
are empty: a new offender fails until it is split (an entry may only be added with a reason, and must
leave when the module or function is split)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
# path below the repository -> why it is still long (split when next touched)
LONG_MODULES: dict[str, str] = {}
LONG_FUNCTIONS: dict[str, str] = {}


def _sources() -> list[Path]:
    return [p for p in sorted((ROOT / "hudi_cdc").rglob("*.py"))
            if "__pycache__" not in p.parts and "templates" not in p.relative_to(ROOT).parts]


def _functions(path: Path) -> dict[str, int]:
    out = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno:
            out[node.name] = max(out.get(node.name, 0), node.end_lineno - node.lineno + 1)
    return out


def test_no_new_long_module_and_the_list_only_shrinks():
    long = {p.relative_to(ROOT).as_posix(): n for p in _sources()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert sorted(set(long) - set(LONG_MODULES)) == [], f"over {MAX_MODULE_LINES} lines: split them ({long})"
    assert sorted(set(LONG_MODULES) - set(long)) == [], "no longer long: remove them from LONG_MODULES"


def test_no_new_long_function_and_the_list_only_shrinks():
    long = {f"{p.relative_to(ROOT).as_posix()}:{name}": n for p in _sources()
            for name, n in _functions(p).items() if n > MAX_FUNCTION_LINES}
    assert sorted(set(long) - set(LONG_FUNCTIONS)) == [], f"over {MAX_FUNCTION_LINES} lines: split them ({long})"
    assert sorted(set(LONG_FUNCTIONS) - set(long)) == [], "no longer long: remove them from LONG_FUNCTIONS"


# modules whose print() is a program's own output: the Spark jobs (their stdout is the runner's protocol)
# and `python -m hudi_cdc.runners.deltastreamer.runtime`
PRINTING_PROGRAMS = ("hudi_cdc/jobs/", "hudi_cdc/runners/deltastreamer/runtime.py")


def test_library_code_never_prints():
    """A library call reports through a callback (``progress``/``show``, default common/text.log_progress),
    never ``print`` nor a ``print`` default: only the CLI decides what reaches the terminal."""
    found = []
    for p in _sources():
        rel = p.relative_to(ROOT).as_posix()
        if rel.startswith(PRINTING_PROGRAMS):
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
                found += [f"{rel}:{node.lineno} {node.name}(... = print)" for d in defaults
                          if isinstance(d, ast.Name) and d.id == "print"]
            elif isinstance(node, ast.BoolOp) and any(isinstance(v, ast.Name) and v.id == "print"
                                                      for v in node.values):
                found.append(f"{rel}:{node.lineno} `or print`")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                found.append(f"{rel}:{node.lineno} print()")
    assert found == [], "use a progress/show callback defaulting to common.text.log_progress"
