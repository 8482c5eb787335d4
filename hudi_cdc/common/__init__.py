"""The kernel: stdlib-only modules the Spark job imports too (job_package zips them; .importlinter keeps them
from importing anything above)."""
