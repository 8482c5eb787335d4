"""The real HoodieDeltaStreamer 0.14.0 run locally: its cached runtime (runtime.py) and jobs (submit.py)."""
