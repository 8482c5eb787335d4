"""Java, Spark's spark-submit, Maven artifacts and the jar cache."""
