"""The local streamer's parts, one job per module; hudi_cdc/jobs/streamer.py is the file
spark-submit runs and the names other code imports.

Light on purpose: stdlib, pyspark, fastavro and hudi (hudi-rs), plus hudi_cdc's stdlib-only
modules (causes, instants, lake_types, properties, spark_conf); never click, jinja2, pydantic or requests.
"""
