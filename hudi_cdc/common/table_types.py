"""Hudi table types and the suffix each gets in table names and paths (cow, mor).

A module of its own so JVM-free commands (`inspect --path`) can name table types without loading
the pipeline model (pydantic) on start-up."""

TYPE_SUFFIX = {"COPY_ON_WRITE": "cow", "MERGE_ON_READ": "mor"}
