"""A standalone Hive metastore from the Hive 2.3.9 jars inside the pyspark wheel.

Hive 2.3's ``HiveMetaStore`` main binds every network interface (it has no bind-host setting), so
the stack runs the same handler through a 20-line launcher (``LoopbackMetaStore`` below: the
``HMSHandler`` + ``TUGIBasedProcessor`` + ``TThreadPoolServer`` that ``HiveMetaStore.startMetaStore``
builds for a non-Kerberos metastore) bound to 127.0.0.1. It is compiled once with the JDK's javac
against ``$SPARK_HOME/jars``. Database: embedded Derby under the data dir (only this process
opens it; every client goes through thrift). ``up`` checks it with a real ``get_all_databases``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from pathlib import Path
from xml.sax.saxutils import escape

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.stack import process
from hudi_cdc.stack.s3proxy import s3a_support
from hudi_cdc.stack.service import Launch, Service
from hudi_cdc.toolchain.java_spark import find_java, spark_jars

LAUNCHER = "LoopbackMetaStore"
LAUNCHER_SOURCE = r"""
import java.net.InetSocketAddress;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.IHMSHandler;
import org.apache.hadoop.hive.metastore.TUGIBasedProcessor;
import org.apache.hadoop.hive.thrift.TUGIContainingTransport;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;

/** Hive 2.3's standalone metastore, bound to one host (HiveMetaStore.main binds every interface). */
public class LoopbackMetaStore {
  public static void main(String[] args) throws Exception {
    String host = args[0];
    int port = Integer.parseInt(args[1]);
    HiveConf conf = new HiveConf(LoopbackMetaStore.class);
    HiveMetaStore.HMSHandler base = new HiveMetaStore.HMSHandler("new db based metaserver", conf, false);
    IHMSHandler handler = HiveMetaStore.newRetryingHMSHandler(base, conf);
    TServerSocket socket = new TServerSocket(new InetSocketAddress(host, port));
    TThreadPoolServer.Args a = new TThreadPoolServer.Args(socket)
        .processor(new TUGIBasedProcessor<IHMSHandler>(handler))
        .transportFactory(new TUGIContainingTransport.Factory())
        .protocolFactory(new TBinaryProtocol.Factory())
        .minWorkerThreads(2).maxWorkerThreads(50);
    System.err.println("LoopbackMetaStore listening on " + host + ":" + port);
    new TThreadPoolServer(a).serve();
  }
}
"""


def hive_site(props: dict) -> str:
    body = "\n".join(f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value></property>"
                     for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n'


def _compile_launcher(java: Path, jars: Path, out: Path) -> Path:
    """Compile LoopbackMetaStore once per source version; returns the classes dir."""
    digest = hashlib.sha256(LAUNCHER_SOURCE.encode()).hexdigest()[:12]
    classes = out / f"launcher-{digest}"
    if (classes / f"{LAUNCHER}.class").exists():
        return classes
    javac = java.resolve().parent / "javac"
    if not javac.exists():
        raise EnvironmentProblem(f"the metastore launcher needs a JDK (javac next to {java}); install a JDK 17")
    src = out / "src" / f"{LAUNCHER}.java"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(LAUNCHER_SOURCE)
    classes.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([str(javac), "-nowarn", "-cp", f"{jars}/*", "-d", str(classes), str(src)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise EnvironmentProblem(f"could not compile the metastore launcher: {proc.stderr.strip()[-500:]}")
    return classes


class Metastore(Service):
    name = "metastore"
    start_timeout = 180.0

    @property
    def port(self) -> int:
        return self.cfg.metastore_port

    @property
    def url(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    @property
    def conf_dir(self) -> Path:
        return self.dir / "conf"

    @property
    def warehouse(self) -> Path:
        return self.cfg.data_dir / "warehouse"

    def prepare(self, progress=None) -> Launch:
        jars = spark_jars()
        java = find_java(17, "the Hive metastore")
        classes = _compile_launcher(java, jars, self.dir)
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.warehouse.mkdir(parents=True, exist_ok=True)
        s3a_jars, s3a_conf, env = s3a_support(self.cfg, progress)  # Hive checks table locations itself
        (self.conf_dir / "hive-site.xml").write_text(hive_site({
            **s3a_conf,
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={self.dir / 'metastore_db'};create=true",
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.async.log.enabled": "false",
            "hive.metastore.warehouse.dir": f"file://{self.warehouse}",
            "hive.metastore.event.db.notification.api.auth": "false",
        }))
        argv: list[str] = [str(java), f"-Xmx{self.cfg.metastore_heap}", process.marker(self.cfg.data_dir),
                           f"-Dderby.system.home={self.dir}",
                           "-cp", os.pathsep.join([str(self.conf_dir), str(classes), f"{jars}/*",
                                                   *map(str, s3a_jars)]),
                           LAUNCHER, self.host, str(self.port)]
        return Launch(argv=argv, env=env, cwd=self.dir)

    def quick_probe(self) -> bool:
        return process.port_open(self.host, self.port)

    def probe(self) -> None:
        list_databases(self.host, self.port, timeout=10.0)


def list_databases(host: str, port: int, timeout: float = 10.0) -> list[str]:
    """A real metastore call (ThriftHiveMetastore.get_all_databases) over plain thrift."""
    from thrift.protocol import TBinaryProtocol
    from thrift.Thrift import TApplicationException, TMessageType, TType
    from thrift.transport import TSocket, TTransport

    logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)  # we report failures ourselves
    sock = TSocket.TSocket(host, port)
    sock.setTimeout(int(timeout * 1000))
    trans = TTransport.TBufferedTransport(sock)
    proto = TBinaryProtocol.TBinaryProtocol(trans)
    trans.open()
    try:
        proto.writeMessageBegin("get_all_databases", TMessageType.CALL, 1)
        proto.writeStructBegin("get_all_databases_args")
        proto.writeFieldStop()
        proto.writeStructEnd()
        proto.writeMessageEnd()
        trans.flush()
        _, mtype, _ = proto.readMessageBegin()
        if mtype == TMessageType.EXCEPTION:
            err = TApplicationException()
            err.read(proto)
            proto.readMessageEnd()
            raise err
        result: list[str] | None = None
        error: str | None = None
        proto.readStructBegin()
        while True:
            _, ftype, fid = proto.readFieldBegin()
            if ftype == TType.STOP:
                break
            if fid == 0 and ftype == TType.LIST:
                _, n = proto.readListBegin()
                result = [proto.readString() for _ in range(n)]
                proto.readListEnd()
            elif fid == 1 and ftype == TType.STRUCT:  # MetaException(message)
                proto.readStructBegin()
                while True:
                    _, t2, f2 = proto.readFieldBegin()
                    if t2 == TType.STOP:
                        break
                    if f2 == 1 and t2 == TType.STRING:
                        error = proto.readString()
                    else:
                        proto.skip(t2)
                    proto.readFieldEnd()
                proto.readStructEnd()
            else:
                proto.skip(ftype)
            proto.readFieldEnd()
        proto.readStructEnd()
        proto.readMessageEnd()
    finally:
        trans.close()
    if error is not None:
        raise RuntimeError(f"metastore error: {error}")
    return result or []
