"""Kafka Connect: the connector configs of a pipeline (connectors.py: the source's from its Source, the S3
sink's) and the REST client that deploys and watches them (client.py)."""
