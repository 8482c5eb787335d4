"""Engines that run a pipeline's jobs (the real HoodieDeltaStreamer of a profile's release)."""
