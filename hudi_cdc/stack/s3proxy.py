"""An S3-compatible endpoint on 127.0.0.1: s3proxy with jclouds' filesystem backend.

Distribution: ``org.gaul:s3proxy:<v>:jar:jar-with-dependencies`` (Maven Central, ~55 MB), fetched
once into ``$HUDI_CDC_HOME/s3proxy/`` and run with Java 17. Objects live under
``<data dir>/s3/blobs/<bucket>/<key>``. s3proxy reads its fixed local keys from its config file
(``<data dir>/s3/s3proxy.conf``, mode 0600), never from its command line; clients find the same keys
in ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (the AWS default chain), see docs/s3.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from hudi_cdc.stack import process
from hudi_cdc.stack.service import Launch, Service
from hudi_cdc.toolchain.jars import home
from hudi_cdc.toolchain.java_spark import find_java
from hudi_cdc.toolchain.maven import Artifact, fetch

GROUP, ARTIFACT, CLASSIFIER = "org.gaul", "s3proxy", "jar-with-dependencies"
DEFAULT_VERSION = "4.1.0"
DEFAULT_BUCKET = "hudi-cdc"
# Fixed keys of the local endpoint: a local development server on 127.0.0.1, not an AWS account.
LOCAL_ACCESS_KEY = "hudi-cdc-local"
LOCAL_SECRET_KEY = "hudi-cdc-local-secret"


def distribution(version: str) -> Artifact:
    return Artifact(GROUP, ARTIFACT, version, "jar", CLASSIFIER)


def ensure_jar(version: str = DEFAULT_VERSION, progress=None) -> Path:
    art = distribution(version)
    path = home() / "s3proxy" / art.filename
    if progress and not path.exists():
        progress(f"fetching s3proxy {version} from Maven Central (once, ~55 MB) ...")
    return fetch(art, home() / "s3proxy", timeout=600)


def local_credentials_env() -> dict[str, str]:
    """The environment a client needs for the local endpoint (what README tells users to export)."""
    return {"AWS_ACCESS_KEY_ID": LOCAL_ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": LOCAL_SECRET_KEY}


class S3Proxy(Service):
    name = "s3"
    start_timeout = 90.0

    @property
    def port(self) -> int:
        return self.cfg.s3_port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def blob_dir(self) -> Path:
        return self.dir / "blobs"

    @property
    def conf_file(self) -> Path:
        return self.dir / "s3proxy.conf"

    def _write_conf(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.blob_dir.mkdir(parents=True, exist_ok=True)
        lines = [
            f"s3proxy.endpoint={self.url}",
            "s3proxy.authorization=aws-v2-or-v4",
            f"s3proxy.identity={LOCAL_ACCESS_KEY}",
            f"s3proxy.credential={LOCAL_SECRET_KEY}",
            "jclouds.provider=filesystem",
            f"jclouds.filesystem.basedir={self.blob_dir}",
        ]
        fd = os.open(self.conf_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write("\n".join(lines) + "\n")

    def prepare(self, progress=None) -> Launch:
        jar = ensure_jar(self.cfg.s3proxy_version, progress)
        java = find_java(17, f"s3proxy {self.cfg.s3proxy_version}")
        self._write_conf()
        argv = [str(java), "-Xmx256m", process.marker(self.cfg.data_dir), "-DLOG_LEVEL=warn",
                "-jar", str(jar), "--properties", str(self.conf_file)]
        return Launch(argv=argv, cwd=self.dir)

    def _client(self):
        from hudi_cdc.common import s3

        ep = s3.Endpoint(url=self.url, path_style=True)
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=ep.url, region_name=ep.region,
                            aws_access_key_id=LOCAL_ACCESS_KEY, aws_secret_access_key=LOCAL_SECRET_KEY,
                            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                                          connect_timeout=2, read_timeout=10))

    def probe(self) -> None:
        self._client().list_buckets()

    def create_bucket(self, bucket: str) -> bool:
        """Create bucket unless it exists; True when it was created."""
        client = self._client()
        names = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
        if bucket in names:
            return False
        client.create_bucket(Bucket=bucket)
        return True


def s3a_support(cfg, progress=None) -> tuple[list[Path], dict[str, str], dict[str, str]]:
    """What a stack JVM (metastore, thrift server) needs to use table locations on the stack's S3
    endpoint: (s3a jars, Hadoop settings without prefix, environment with the endpoint's local keys).
    Nothing when the stack runs without S3 (`local up` without --s3)."""
    if not cfg.s3:
        return [], {}, {}
    from hudi_cdc.common import s3
    from hudi_cdc.toolchain.jars import ensure, s3a_artifacts

    jars = [ensure(a, progress) for a in s3a_artifacts()]
    ep = s3.Endpoint(url=cfg.s3_endpoint, path_style=True)
    return jars, s3.hadoop_conf(ep, prefix=""), {**local_credentials_env(), **s3.endpoint_env(ep)}
