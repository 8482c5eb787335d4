"""The one wait loop of both AWS runners: probe, say each state change, sleep, time out.

A probe answers ``(state, detail, done)``. EMR steps are probed with one attempt of boto3's own
``step_complete`` waiter at a time (Airflow's ``waiter_with_logging`` pattern: the waiter's acceptors
decide success and failure, this loop logs every state and owns sleep and timeout, so tests can
drive both); EMR Serverless has no waiters in botocore, so its probe is a plain describe call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from hudi_cdc.runners.aws.client import error
from hudi_cdc.runners.aws.errors import WaitTimeout

Probe = Callable[[], tuple[str, dict[str, Any], bool]]


def describe_until(describe: Callable[[], tuple[str, dict[str, Any]]], stop: Sequence[str]) -> Probe:
    """A probe from a describe call: done once the state is one of ``stop``."""

    def probe() -> tuple[str, dict[str, Any], bool]:
        state, detail = describe()
        return state, detail, state in stop

    return probe


def waiter_attempt(client: Any, waiter_name: str, state_of: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]],
                   stop: Sequence[str], **params: Any) -> Probe:
    """A probe from one attempt of ``client.get_waiter(waiter_name)``: done on the waiter's success
    or failure, or once the state is one of ``stop`` (states its acceptors do not know)."""
    from botocore import xform_name
    from botocore.exceptions import WaiterError

    waiter = client.get_waiter(waiter_name)
    success = next(a.expected for a in waiter.config.acceptors if a.state == "success")
    operation = xform_name(waiter.config.operation)

    def probe() -> tuple[str, dict[str, Any], bool]:
        try:
            waiter.wait(**params, WaiterConfig={"MaxAttempts": 1})
        except WaiterError as exc:
            resp = exc.last_response or {}
            if "Error" in resp:
                err = resp["Error"]
                raise error(client, operation, err.get("Code", "Error"), err.get("Message", str(exc))) from exc
            state, detail = state_of(resp)
            return state, detail, "terminal failure" in str(exc) or state in stop
        return success, {}, True

    return probe


def poll(
    probe: Probe,
    *,
    what: str,
    poll_seconds: float,
    timeout_seconds: float,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[str, dict[str, Any]]:
    """Probe every ``poll_seconds`` until done; say each state change.

    Raises WaitTimeout after ``timeout_seconds`` with the last state seen. Terminal-state handling
    (failure, cancellation) is left to the caller, which knows where the logs are.
    """
    start = clock()
    last = None
    while True:
        state, detail, done = probe()
        if state != last:
            elapsed = int(clock() - start)
            say(f"{what}: {state}" + (f" (after {elapsed}s)" if last is not None else ""))
            last = state
        if done:
            return state, detail
        if clock() - start >= timeout_seconds:
            raise WaitTimeout(
                f"timed out after {int(timeout_seconds)}s waiting for {what} (last state {state}); "
                "it may still be running: check with `hudi-cdc emr status`, stop it with `hudi-cdc emr cancel`")
        sleep(poll_seconds)
