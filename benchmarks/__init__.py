"""On-demand benchmarks (never timed tests): `python -m benchmarks.run`, see benchmarks/README.md."""
