"""``verify`` and ``verify --wait``: the pipeline's table against its database table. The Source reads the
database side (sources/postgres/verify.py, sources/mysql/verify.py); comparison.py compares it with the
lake in the types a lake user reads."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from hudi_cdc import sources
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ExitCode, HudiCdcError, SourceError
from hudi_cdc.sources.comparison import SAMPLES, VerifyResult
from hudi_cdc.sources.scd2_verify import verify_whole

__all__ = ["SAMPLES", "TablesDiffer", "VerifyResult", "verify", "verify_every", "verify_until_equal", "verify_whole"]


class TablesDiffer(HudiCdcError):
    """verify found rows that differ between the database and the lake."""

    exit_code = ExitCode.DIFFERS


def verify(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES, history: bool = False
           ) -> VerifyResult:
    """The pipeline's table against its database table (the Source reads the database side); `history`:
    the current versions of its history table instead."""
    return sources.for_pipeline(pipeline).verify(pipeline, table, table_type, samples, history)


def verify_until_equal(pipeline: Pipeline, table: str, table_type: str, wait_seconds: float,
                       poll_seconds: float = 5.0, progress: Callable[[str], None] = lambda m: None,
                       compare: Callable[..., VerifyResult] | None = None) -> VerifyResult:
    """`verify`, repeated while a running capture and stream catch up: the database moves on while the
    lake follows it, so a comparison taken mid-flight can differ by what is still in transit. Compares
    every `poll_seconds` (tenacity's retry loop) until the tables are equal or `wait_seconds` have passed;
    returns the last result (equal, or the differences that stayed). wait_seconds=0: one comparison."""
    from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_delay, wait_fixed

    run = compare or verify

    def last(state: RetryCallState) -> VerifyResult:
        assert state.outcome is not None  # called after an attempt
        return state.outcome.result()

    attempts = Retrying(stop=stop_after_delay(wait_seconds), wait=wait_fixed(poll_seconds),
                        retry=retry_if_result(lambda r: not r.equal), retry_error_callback=last, reraise=True,
                        before_sleep=lambda state: progress(f"{last(state).summary()}; "
                                                            f"comparing again in {poll_seconds:g} s"))
    return attempts(run, pipeline, table, table_type)


def verify_every(pipeline: Pipeline, table_type: str, wait_seconds: float = 0, poll_seconds: float = 5.0,
                 progress: Callable[[str], None] = lambda m: None, history: bool = False,
                 ) -> tuple[list[VerifyResult], list[tuple[str, str, HudiCdcError]]]:
    """Every table of the pipeline that has `table_type` (with `history`: every table keeping a history table),
    one after the other: (their results, the tables that could not be compared with their error). One table's
    error (not bootstrapped yet, its source table gone) does not stop the others; the database down does."""
    results: list[VerifyResult] = []
    failed: list[tuple[str, str, HudiCdcError]] = []
    names = [n for n, tt in pipeline.targets() if tt == table_type and (not history or pipeline.table(n).history)]
    for i, name in enumerate(names, 1):
        progress(f"verify {name} ({table_type}) [{i}/{len(names)}]")
        try:
            results.append(verify_until_equal(pipeline, name, table_type, wait_seconds, poll_seconds, progress,
                                              compare=partial(verify, history=history)))
        except SourceError:
            raise
        except HudiCdcError as exc:
            failed.append((name, table_type, exc))
    return results, failed
