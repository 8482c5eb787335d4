"""tests/durations.json from a whole run's log (tests/conftest.py hands the xdist groups out longest first by it).

    CI=true bash scripts/test.sh --durations=0 > run.log 2>&1
    python scripts/durations.py run.log            # per group seconds and a 4-worker schedule; --write updates the file

Reads pytest's `--durations=0` lines (`12.34s call  tests/x.py::test@group`), sums setup, call and teardown per
file and per xdist group, and prints where each of four workers would end if the groups went out longest first.
With --write the files' seconds replace theirs in tests/durations.json (files the run left out keep theirs)."""

from __future__ import annotations

import argparse
import heapq
import json
import re
from pathlib import Path

DURATIONS = Path(__file__).resolve().parents[1] / "tests" / "durations.json"
LINE = re.compile(r"^([\d.]+)s (?:call|setup|teardown)\s+(\S+?)::\S+@(\S+)$", re.M)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--write", action="store_true", help="update tests/durations.json")
    args = ap.parse_args()
    files: dict[str, float] = {}
    groups: dict[str, set[str]] = {}
    for seconds, path, group in LINE.findall(Path(args.log).read_text(errors="replace")):
        files[path] = files.get(path, 0.0) + float(seconds)
        groups.setdefault(group, set()).add(path)
    if not files:
        raise SystemExit(f"{args.log}: no --durations=0 lines of an xdist run")
    weight = {g: sum(files[p] for p in paths) for g, paths in groups.items()}
    print(f"{sum(files.values()):,.0f} worker-seconds in {len(files)} files")
    for group, seconds in sorted(weight.items(), key=lambda x: -x[1])[:15]:
        print(f"{seconds:8.0f}  {group} ({len(groups[group])} files)")
    ends = [0.0] * args.workers
    for seconds in sorted(weight.values(), reverse=True):
        heapq.heapreplace(ends, ends[0] + seconds)
    print("workers end at", ", ".join(f"{e:,.0f} s" for e in sorted(ends)))
    if args.write:
        known = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
        known.update({p: round(s, 1) for p, s in files.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n")
        print(f"{DURATIONS}: {len(files)} files' seconds")


if __name__ == "__main__":
    main()
