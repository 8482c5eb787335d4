"""hudi-cdc: land Debezium change data in Apache Hudi tables."""

__version__ = "0.1.0"
