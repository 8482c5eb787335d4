"""Where a JVM's CPU went, from a Java Flight Recorder file: samples per thread, the hottest frames, the
frames most often on the stack, and (with --callers/--below NAME) who calls a method or what runs under it.

    python -m benchmarks.jfr_top FILE.jfr [--top 40] [--callers NAME | --below NAME] [--jfr PATH]

Record a hudi-cdc job by giving its driver JFR options through a benchmark's Spark settings, e.g. a
warm_rounds variant: `spark.driver.extraJavaOptions` = `-XX:+UseG1GC -Xshare:off
-XX:FlightRecorderOptions=stackdepth=300 -XX:StartFlightRecording=filename=/tmp/x.jfr,settings=profile`
(`-Xshare:off`: JFR's stack walking crashed with hudi-cdc's class-data sharing archive). A JDK's `jfr` tool
(Java 17's does) reads it: its `--json` output is parsed here, the first read cached next to the file.
"""

from __future__ import annotations

import argparse
import collections
import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

_INTERNAL = ("java/", "jdk/", "sun/", "scala/")


def stacks(path: Path, jfr: str) -> list[tuple[str, list[str]]]:
    """(thread, frames top first) of every execution sample."""
    cache = path.with_suffix(path.suffix + ".stacks.pickle")
    if cache.exists() and cache.stat().st_mtime >= path.stat().st_mtime:
        return pickle.loads(cache.read_bytes())
    out = subprocess.run([jfr, "print", "--json", "--stack-depth", "300", "--events", "jdk.ExecutionSample",
                          str(path)], capture_output=True, text=True, check=True).stdout
    result = []
    for e in json.loads(out)["recording"]["events"]:
        v = e["values"]
        frames = (v.get("stackTrace") or {}).get("frames") or []
        thread = (v.get("sampledThread") or {}).get("javaName") or "?"
        result.append((thread, [f["method"]["type"]["name"] + "." + f["method"]["name"] for f in frames]))
    cache.write_bytes(pickle.dumps(result))
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--callers", help="the nearest non-JDK callers of methods whose name contains this")
    ap.add_argument("--below", help="the frames just above (called by) methods whose name contains this")
    ap.add_argument("--jfr", default=shutil.which("jfr") or "jfr", help="a JDK's `jfr` tool")
    args = ap.parse_args(argv)
    samples = stacks(args.file, args.jfr)
    print(f"{len(samples)} samples")
    count: collections.Counter = collections.Counter()
    if args.callers or args.below:
        name = args.callers or args.below
        for _, frames in samples:
            at = next((i for i, f in enumerate(frames) if name in f), None)
            if at is None:
                continue
            if args.callers:
                rest = [f for f in frames[at + 1:] if name not in f and not f.startswith(_INTERNAL)]
                count[" <- ".join(rest[:4])] += 1
            else:
                count[" -> ".join(reversed(frames[max(0, at - 3):at]))] += 1
    else:
        threads = collections.Counter(t for t, _ in samples)
        print("threads:", ", ".join(f"{t} {n}" for t, n in threads.most_common(8)))
        top = collections.Counter(frames[0] for _, frames in samples if frames)
        print("hottest frames:")
        for f, n in top.most_common(args.top // 2):
            print(f"  {n:6d} {f}")
        for _, frames in samples:
            count.update(set(frames))
        print("on the stack:")
    for f, n in count.most_common(args.top):
        print(f"  {n:6d} {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
