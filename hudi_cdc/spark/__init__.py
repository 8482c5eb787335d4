"""How hudi-cdc starts a Spark JVM (spark-submit): one launcher."""
