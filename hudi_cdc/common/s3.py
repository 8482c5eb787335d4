"""S3 (AWS or an S3-compatible endpoint such as `hudi-cdc local up --s3`) for local runs and readers.

Where the endpoint comes from: the pipeline's ``storage.s3_endpoint``, else ``AWS_ENDPOINT_URL_S3`` /
``AWS_ENDPOINT_URL`` (the AWS SDKs' own variables), else AWS itself. Credentials are never handled
here: every client (boto3, hudi-rs, Hadoop's s3a) finds them through the AWS default chain
(``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``, profiles, instance roles), so no key ever reaches
an argv, a rendered file or a log.

Standard library only at import: the local streamer job imports it in the Spark driver (boto3 is
imported only when an S3 call is made).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from hudi_cdc.errors import EnvironmentProblem

SCHEMES = ("s3://", "s3a://")
ENDPOINT_ENV = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
REGION_ENV = ("AWS_REGION", "AWS_DEFAULT_REGION")
DEFAULT_REGION = "us-east-1"
# Hadoop's s3a: the default chain of the AWS SDK v1 that hadoop-aws 3.3.4 uses (env vars first)
S3A_CREDENTIALS_PROVIDER = "com.amazonaws.auth.DefaultAWSCredentialsProviderChain"


class S3Problem(EnvironmentProblem):
    """An S3 call that failed: the message names the endpoint and the URI (never a key)."""


def is_s3(uri: str) -> bool:
    return uri.startswith(SCHEMES)


def split(uri: str) -> tuple[str, str]:
    """(bucket, key) of s3://bucket/key."""
    u = urlparse(uri)
    return u.netloc, u.path.lstrip("/")


def to_s3a(uri: str) -> str:
    return "s3a://" + uri[len("s3://"):] if uri.startswith("s3://") else uri


@dataclass(frozen=True)
class Endpoint:
    """How to reach S3: None url = AWS itself."""

    url: str | None = None
    region: str = DEFAULT_REGION
    path_style: bool = False

    @property
    def name(self) -> str:
        return self.url or f"AWS S3 ({self.region})"

    @property
    def http(self) -> bool:
        return bool(self.url and self.url.startswith("http://"))


_default: Endpoint | None = None


def use(ep: Endpoint | None) -> None:
    """Make ep this process's endpoint for calls that name none (a loaded pipeline's storage settings)."""
    global _default
    _default = ep


def endpoint(url: str | None = None, region: str | None = None, path_style: bool | None = None) -> Endpoint:
    """The endpoint from explicit settings, else the one a loaded pipeline set (use()), else the AWS
    SDKs' environment variables."""
    if url is None and region is None and path_style is None and _default is not None:
        return _default
    url = url or next((os.environ[v] for v in ENDPOINT_ENV if os.environ.get(v)), None)
    region = region or next((os.environ[v] for v in REGION_ENV if os.environ.get(v)), None) or DEFAULT_REGION
    return Endpoint(url=url.rstrip("/") if url else None, region=region,
                    path_style=bool(url) if path_style is None else path_style)


def endpoint_env(ep: Endpoint) -> dict[str, str]:
    """The environment a child process (spark-submit, the streamer's driver) needs to reach ep."""
    env = {"AWS_REGION": ep.region}
    if ep.url:
        env["AWS_ENDPOINT_URL"] = ep.url
    return env


def hadoop_conf(ep: Endpoint, prefix: str = "spark.hadoop.") -> dict[str, str]:
    """s3a settings for Spark/Hudi on local and self-managed clusters (never on EMR: EMRFS there).

    s3:// is served by S3A too (fs.s3.impl), so table paths stay s3://... as on EMR."""
    conf = {
        "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "fs.s3a.aws.credentials.provider": S3A_CREDENTIALS_PROVIDER,
        "fs.s3a.endpoint.region": ep.region,
        "fs.s3a.path.style.access": str(ep.path_style).lower(),
    }
    if ep.url:
        conf["fs.s3a.endpoint"] = ep.url
        conf["fs.s3a.connection.ssl.enabled"] = str(not ep.http).lower()
        # fail fast on an endpoint that is down instead of retrying for minutes
        conf["fs.s3a.attempts.maximum"] = "3"
        conf["fs.s3a.retry.limit"] = "3"
    return {prefix + k: v for k, v in conf.items()}


def hudi_rs_options(ep: Endpoint) -> dict[str, str]:
    """Storage options for hudi-rs (object_store's aws_* keys); keys from the environment only."""
    opts = {"aws_region": ep.region}
    if ep.url:
        opts["aws_endpoint"] = ep.url
        opts["aws_allow_http"] = str(ep.http).lower()
        opts["aws_virtual_hosted_style_request"] = str(not ep.path_style).lower()
    for env_name, opt in (("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
                          ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
                          ("AWS_SESSION_TOKEN", "aws_session_token")):
        if os.environ.get(env_name):
            opts[opt] = os.environ[env_name]
    return opts


_clients: dict[Endpoint, Any] = {}


def client(ep: Endpoint | None = None):
    """A boto3 S3 client for ep (default: from the environment), few retries, short timeouts."""
    ep = ep or endpoint()
    if ep not in _clients:
        import boto3
        from botocore.config import Config

        cfg = Config(s3={"addressing_style": "path" if ep.path_style else "auto"},
                     retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=5, read_timeout=60)
        # a session of its own: boto3's default session keeps the credentials it resolved first, so a
        # process whose AWS_* variables change (another endpoint, other keys) would sign with stale ones
        session = boto3.session.Session()
        _clients[ep] = session.client("s3", endpoint_url=ep.url, region_name=ep.region, config=cfg)
    return _clients[ep]


def problem(exc: BaseException, uri: str, ep: Endpoint | None = None) -> S3Problem:
    """One line naming the endpoint, the URI and what went wrong (a missing bucket, no answer)."""
    ep = ep or endpoint()
    code = ""
    resp = getattr(exc, "response", None)
    if isinstance(resp, dict):
        code = str(resp.get("Error", {}).get("Code", ""))
    if code in ("NoSuchBucket", "404") and not split(uri)[1]:
        why = f"bucket {split(uri)[0]} does not exist"
    elif code == "NoSuchBucket":
        why = f"bucket {split(uri)[0]} does not exist"
    elif type(exc).__name__ in ("EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError"):
        why = "the endpoint does not answer"
    elif type(exc).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
        why = "no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
    else:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return S3Problem(f"{uri} on {ep.name}: {why}")


def check_bucket(uri: str, ep: Endpoint | None = None) -> None:
    """Raise S3Problem (one line) unless the bucket of uri exists and answers."""
    ep = ep or endpoint()
    bucket, _ = split(uri)
    try:
        client(ep).head_bucket(Bucket=bucket)
    except Exception as exc:  # botocore raises many types; all become one line
        raise problem(exc, f"s3://{bucket}", ep) from None


def list_objects(uri: str, ep: Endpoint | None = None, delimiter: str | None = None):
    """Every object under the prefix uri/ (recursive unless delimiter): dicts with Key, Size, LastModified."""
    ep = ep or endpoint()
    bucket, prefix = split(uri)
    prefix = prefix.rstrip("/") + "/" if prefix else ""
    kwargs: dict[str, str] = {"Bucket": bucket, "Prefix": prefix}
    if delimiter:
        kwargs["Delimiter"] = delimiter
    try:
        for page in client(ep).get_paginator("list_objects_v2").paginate(**kwargs):
            yield from page.get("Contents", [])
    except Exception as exc:
        raise problem(exc, uri, ep) from None


def list_prefixes(uri: str, ep: Endpoint | None = None) -> list[str]:
    """The 'folder' names directly under the prefix uri/ (S3's common prefixes)."""
    ep = ep or endpoint()
    bucket, prefix = split(uri)
    prefix = prefix.rstrip("/") + "/" if prefix else ""
    try:
        pages = client(ep).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix, Delimiter="/")
        return [p["Prefix"][len(prefix):].rstrip("/") for page in pages for p in page.get("CommonPrefixes", [])]
    except Exception as exc:
        raise problem(exc, uri, ep) from None


def exists(uri: str, ep: Endpoint | None = None) -> bool:
    """An object at uri, or any object under uri/ (a 'folder')."""
    ep = ep or endpoint()
    bucket, key = split(uri)
    try:
        page = client(ep).list_objects_v2(Bucket=bucket, Prefix=key.rstrip("/"), MaxKeys=2)
    except Exception as exc:
        raise problem(exc, uri, ep) from None
    k = key.rstrip("/")
    return any(o["Key"] == k or o["Key"].startswith(k + "/") for o in page.get("Contents", []))


def read_bytes(uri: str, ep: Endpoint | None = None) -> bytes | None:
    """The object's bytes, None when there is no such key."""
    ep = ep or endpoint()
    bucket, key = split(uri)
    c = client(ep)
    try:
        return c.get_object(Bucket=bucket, Key=key)["Body"].read()
    except c.exceptions.NoSuchKey:
        return None
    except Exception as exc:
        raise problem(exc, uri, ep) from None


def write_bytes(uri: str, data: bytes, ep: Endpoint | None = None) -> None:
    ep = ep or endpoint()
    bucket, key = split(uri)
    try:
        client(ep).put_object(Bucket=bucket, Key=key, Body=data)
    except Exception as exc:
        raise problem(exc, uri, ep) from None


def delete(uri: str, ep: Endpoint | None = None) -> None:
    """Remove the object (no error when there is none, as S3 itself)."""
    ep = ep or endpoint()
    bucket, key = split(uri)
    try:
        client(ep).delete_object(Bucket=bucket, Key=key)
    except Exception as exc:
        raise problem(exc, uri, ep) from None


def modified_ms(uri: str, ep: Endpoint | None = None) -> int | None:
    """The object's modification time as a listing gives it (what the streamer's checkpoint compares),
    in ms; None when there is no such key."""
    ep = ep or endpoint()
    bucket, key = split(uri)
    try:
        page = client(ep).list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
    except Exception as exc:
        raise problem(exc, uri, ep) from None
    for o in page.get("Contents", []):
        if o["Key"] == key:
            return int(o["LastModified"].timestamp() * 1000)
    return None


def storage_options_for(uri: str) -> dict[str, str]:
    """hudi-rs storage options for a table URI: the endpoint's for s3://, none for local tables."""
    return hudi_rs_options(endpoint()) if is_s3(uri) else {}


def hudi_table_builder(uri: str):
    """hudi-rs' HudiTableBuilder for uri, with the S3 endpoint's storage options when uri is s3://."""
    from hudi import HudiTableBuilder

    builder = HudiTableBuilder.from_base_uri(uri)
    opts = storage_options_for(uri)
    return builder.with_storage_options(opts) if opts else builder
