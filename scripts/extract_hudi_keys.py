#!/usr/bin/env python3
"""Extract every config key and HoodieStreamer flag that Hudi's own sources define.

Usage: extract_hudi_keys.py OUT.txt SOURCES.jar [SOURCES.jar ...]

Reads Java/Scala sources from Hudi's `-sources.jar` artifacts on Maven Central (e.g.
org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0:jar:sources,
org.apache.hudi:hudi-utilities_2.12:0.14.0:jar:sources) and writes the sorted key names
(`key:` lines) and streamer flags (`flag:` lines). Keys built as `PREFIX + "suffix"` are resolved
through the `static final String PREFIX = "..."` constants of the same sources. The output is a
list of names (data), which tests/core/test_hudi_keys.py checks rendered files against.
"""

import re
import sys
import zipfile

_TERM = r'(?:"(?:[^"\\]|\\.)*"|[A-Z][A-Z0-9_]*)'
CONST = re.compile(r'(?:static\s+final\s+String|val)\s+([A-Z][A-Z0-9_]*)\s*(?::\s*String\s*)?=\s*'
                   r'(' + _TERM + r'(?:\s*\+\s*' + _TERM + r')*)\s*;?')
KEYCALL = re.compile(r'\.(?:key|withAlternatives)\(\s*([^;]*?)\)\s*(?:\n|\.)', re.S)
LITERAL_KEY = re.compile(r'"(hoodie\.[A-Za-z0-9_.\-]+)"')
FLAGS = re.compile(r'@Parameter\(\s*names\s*=\s*\{([^}]*)\}')


def sources(jars):
    for jar in jars:
        with zipfile.ZipFile(jar) as zf:
            for name in zf.namelist():
                if name.endswith((".java", ".scala")):
                    yield name, zf.read(name).decode("utf-8", "replace")


def evaluate(expr, consts):
    parts = [p.strip() for p in re.split(r'\s*\+\s*', expr.strip())]
    out = ""
    for p in parts:
        if p.startswith('"') and p.endswith('"'):
            out += p[1:-1]
        elif p in consts:
            out += consts[p]
        else:
            return None
    return out


def main(out_path, jars):
    files = list(sources(jars))
    raw = {}
    for _, text in files:
        for m in CONST.finditer(text):
            raw.setdefault(m.group(1), m.group(2))
    consts = {}
    for _ in range(4):  # constants built from other constants
        for name, expr in raw.items():
            v = evaluate(expr, consts)
            if v is not None:
                consts[name] = v
    keys, flags = set(), set()
    for _, text in files:
        keys.update(LITERAL_KEY.findall(text))
        for m in KEYCALL.finditer(text):
            for arg in re.split(r',\s*(?=(?:[^"]*"[^"]*")*[^"]*$)', m.group(1)):
                v = evaluate(arg, consts)
                if v and v.startswith("hoodie."):
                    keys.add(v)
        for m in FLAGS.finditer(text):
            flags.update(re.findall(r'"(--[A-Za-z0-9\-]+)"', m.group(1)))
    with open(out_path, "w") as fh:
        fh.write(f"# extracted by scripts/extract_hudi_keys.py from: {' '.join(j.rsplit('/', 1)[-1] for j in jars)}\n")
        for k in sorted(keys):
            fh.write(f"key:{k}\n")
        for f in sorted(flags):
            fh.write(f"flag:{f}\n")
    print(f"{out_path}: {len(keys)} keys, {len(flags)} flags")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
