"""What the EMR and EMR Serverless runners share, in one place.

``client`` (boto3 clients, AWS error mapping, paginated listing, the dry-run recorder), ``errors``
(one class per outcome), ``layout`` (names and S3 URIs), ``checks`` (what cannot run on AWS,
secrets), ``upload`` (the rendered files), ``logs`` (log tails on S3), ``poll`` (the one wait loop)
and ``runner`` (the flow both runners follow). Nothing here imports ``runners.emr`` or
``runners.emr_serverless``.

boto3 is imported lazily (``hudi-cdc --help`` stays instant). Credentials and the endpoint come
only from boto3's standard chain (environment, shared config/credentials files, SSO, instance or
container role; ``AWS_ENDPOINT_URL`` for a stand-in such as moto): hudi-cdc never reads, stores,
passes or prints a key.
"""
