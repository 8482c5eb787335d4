"""The no-JVM table layer: table, timeline and commit metadata readers, hudi-rs reads, status."""
