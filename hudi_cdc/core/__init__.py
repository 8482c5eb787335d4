"""What a job and a table are: version profiles, rendered properties and spark-submit argv, table locks."""
