"""Py4J's name lookups, remembered for the life of the process.

Every `F.col(...)`, `F.lit(...)` or `spark._jvm.org.apache...` that PySpark evaluates asks the JVM to resolve a
name: `functions` is tried against each of the gateway's imports (`java.lang.functions`,
`org.apache.spark.api.java.functions`, ...) and `org`, `org.apache`, ... as class names, and every miss
searches each jar of the class path (Spark's ~250 and Hudi's bundle) without the JVM remembering it. A
profile of a long `stream --all` found ~6% of the driver JVM's CPU there (docs/measurements.md); PySpark
3.5 asks again for every column expression it builds. Py4J (0.10.9.x) keeps no cache, so this module
keeps one: what a name resolved to (a class, a package, a static method) never changes in a running JVM
whose class path is fixed, which hudi-cdc's is (its jars are given when the session starts; nothing adds
one later). Field values and instance members are not cached: those are asked every time, as before. Keys
carry the gateway, so two JVMs in one process never share an answer (a cached object keeps its gateway alive,
so its id is never reused).
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_installed = False


def install() -> None:
    """Remember resolved names from now on (idempotent, process-wide)."""
    global _installed
    with _lock:
        if _installed:
            return
        from py4j import java_gateway as gw  # type: ignore[import-untyped]

        named = (gw.JavaClass, gw.JavaPackage)
        _wrap(gw.JVMView, lambda v, name: ("view", id(v._gateway_client), v._id, name), named)
        _wrap(gw.JavaPackage, lambda p, name: ("package", id(p._gateway_client), p._jvm_id, p._fqn, name), named)
        _wrap(gw.JavaClass, lambda c, name: ("class", id(c._gateway_client), c._fqn, name),
              (gw.JavaClass, gw.JavaMember))
        _installed = True


def _wrap(cls, key_of, kept: tuple[type, ...]) -> None:
    original = cls.__getattr__
    cache: dict[tuple, object] = {}

    def __getattr__(self, name):
        if name.startswith("__"):  # magic members: py4j's own answer (AttributeError), never cached
            return original(self, name)
        key = key_of(self, name)
        hit = cache.get(key)
        if hit is None:
            hit = original(self, name)
            if type(hit) in kept:  # a class, package or static method; a field's value is asked again
                cache[key] = hit
        return hit

    __getattr__.__wrapped__ = original  # type: ignore[attr-defined]
    cls.__getattr__ = __getattr__


# a session started with `spark.hudi_cdc.py4j.lookups=uncached` asks the JVM every time (a benchmark's baseline)
SWITCH = "spark.hudi_cdc.py4j.lookups"


def install_for(spark):
    """install() unless the session's configuration says `uncached`; returns the session."""
    if spark.sparkContext.getConf().get(SWITCH, "cached") != "uncached":
        install()
    return spark
