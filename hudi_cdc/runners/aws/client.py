"""boto3 clients from the standard chain, every botocore error as one AwsError line, paginated
listing, and the dry-run stand-in that prints each call instead of making it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hudi_cdc.errors import AwsError

TOOL = "hudi-cdc"


def aws_client(service: str, region: str) -> Any:
    """A boto3 client from the standard credential chain; endpoint from AWS_ENDPOINT_URL if set."""
    try:
        import boto3
        from botocore.config import Config
    except ModuleNotFoundError as exc:  # pragma: no cover - boto3 is an install requirement
        raise AwsError("boto3 is not installed: pip install boto3") from exc
    cfg = Config(user_agent_extra=TOOL)  # retries, timeouts: the user's AWS config / AWS_RETRY_MODE
    return boto3.session.Session().client(service, region_name=region, config=cfg)


def check_credentials() -> None:
    """Fail before anything is touched when boto3's standard chain finds no credentials."""
    import boto3

    if boto3.session.Session().get_credentials() is None:
        raise AwsError("no AWS credentials found by boto3's standard chain (environment, ~/.aws config or "
                       "credentials, SSO, instance or container role); run `aws configure` or `aws sso login`")


def service_name(client: Any) -> str:
    if isinstance(client, DryRunClient):
        return client.service
    return client.meta.service_model.service_name


def error(client: Any, operation: str, code: str, message: str) -> AwsError:
    """The one-line AwsError for a failed call; ``.code`` keeps AWS's error code."""
    err = AwsError(f"{service_name(client)}.{operation} failed: {code}: {message}")
    err.code = code  # type: ignore[attr-defined]
    return err


@contextmanager
def mapped(client: Any, operation: str) -> Iterator[None]:
    """Turn every botocore error raised inside into one AwsError line."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as exc:
        err = exc.response.get("Error", {})
        raise error(client, operation, err.get("Code", "Error"), err.get("Message") or str(exc)) from exc
    except BotoCoreError as exc:
        raise AwsError(f"{service_name(client)}.{operation} failed: {exc}") from exc


def call(client: Any, operation: str, **params: Any) -> dict[str, Any]:
    """``client.<operation>(**params)``; every botocore error becomes one AwsError line."""
    with mapped(client, operation):
        return getattr(client, operation)(**params)


def items(client: Any, operation: str, key: str, **params: Any) -> list[dict[str, Any]]:
    """Every ``key`` item of every page of ``operation`` (boto3's paginator), errors mapped."""
    with mapped(client, operation):
        return [item for page in client.get_paginator(operation).paginate(**params) for item in page.get(key, [])]


# ---- dry run -----------------------------------------------------------------------------------
def _printable(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: f"<{len(v)} bytes>" if isinstance(v, (bytes, bytearray)) else v for k, v in params.items()}


@dataclass
class DryRunClient:
    """Stands where a boto3 client would; prints each call as ``<service>.<operation> <json>``
    instead of making it, and answers with just enough for the runner to go on. Makes no network
    call and needs no credentials."""

    service: str
    echo: Callable[[str], None]
    answers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)

    def get_paginator(self, operation: str) -> _DryRunPaginator:
        return _DryRunPaginator(getattr(self, operation))

    def __getattr__(self, operation: str) -> Callable[..., dict[str, Any]]:
        if operation.startswith("_"):
            raise AttributeError(operation)

        def _call(**params: Any) -> dict[str, Any]:
            self.echo(f"{self.service}.{operation} {json.dumps(_printable(params), sort_keys=True, default=str)}")
            answer = self.answers.get(operation)
            return answer(params) if answer else {}

        return _call


@dataclass
class _DryRunPaginator:
    """A paginator over a DryRunClient operation: one (printed) call, one page."""

    operation: Callable[..., dict[str, Any]]

    def paginate(self, **params: Any) -> Iterator[dict[str, Any]]:
        yield self.operation(**params)
