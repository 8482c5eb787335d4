"""Java and pyspark's own spark-submit on this machine, and the root cause in a Spark log."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Sequence

from ...errors import EnvironmentProblem


def spark_home() -> Path:
    try:
        import pyspark
    except ImportError:
        raise EnvironmentProblem("pyspark is not installed (pip install 'pyspark==3.5.5')") from None
    return Path(pyspark.__file__).parent


def spark_submit() -> Path:
    path = spark_home() / "bin" / "spark-submit"
    if not path.exists():
        raise EnvironmentProblem(f"spark-submit not found in the pyspark package at {path}")
    return path


def find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if not java:
        raise EnvironmentProblem("Java not found: install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless) "
                                 "or set JAVA_HOME")
    return java


_ROOT_CAUSE = re.compile(r"(Caused by: .*|\w+(?:\.\w+)*(?:Exception|Error): .*)")


def root_cause(lines: Sequence[str]) -> str:
    """The deepest 'Caused by' (or last exception line) of a Spark log."""
    caused = [l.strip() for l in lines if l.strip().startswith("Caused by:")]
    if caused:
        return caused[-1][len("Caused by:"):].strip()
    exc = [m.group(1) for l in lines for m in [_ROOT_CAUSE.search(l)] if m]
    return exc[-1] if exc else (lines[-1].strip() if lines else "no output")
