"""The EMR runner: one step per job on a running cluster; step JSON for `render --emr-steps`."""

from hudi_cdc.runners.emr.plan import steps_json, steps_text, to_cli_step
from hudi_cdc.runners.emr.runner import EmrRunner

__all__ = ["EmrRunner", "steps_json", "steps_text", "to_cli_step"]
