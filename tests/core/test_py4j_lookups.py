"""Py4J's name lookups remembered (hudi_cdc/common/py4j_lookups.py): the shared session installs it; a class,
package or static method is asked of the JVM once, a field's value every time, and the answers still work."""

from hudi_cdc.common import py4j_lookups


def test_resolved_names_are_asked_once_and_still_work(spark):
    from py4j import java_gateway as gw
    from pyspark.sql import Column

    jvm = spark.sparkContext._jvm
    assert gw.JVMView.__getattr__.__wrapped__  # the shared session installed it, as build_session does
    sent = []
    client = spark.sparkContext._gateway._gateway_client
    real_send = client.send_command

    def counting(command, *args, **kwargs):
        sent.append(command)
        return real_send(command, *args, **kwargs)

    client.send_command = counting
    try:
        first = jvm.org.apache.spark.sql.functions  # a class through four packages
        lookups = len(sent)
        assert jvm.org.apache.spark.sql.functions is first and len(sent) == lookups  # remembered: nothing sent
        assert jvm.functions is jvm.functions  # the gateway's imports: the same answer, once
        static = first.lit
        assert first.lit is static
        assert spark.range(1).select((Column(static(41)) + 1).alias("x")).first()[0] == 42
        before = len(sent)
        assert jvm.java.lang.Integer.MAX_VALUE == 2**31 - 1  # a field: its value is asked again
        assert jvm.java.lang.Integer.MAX_VALUE == 2**31 - 1
        fields = [c for c in sent[before:] if "MAX_VALUE" in c]
        assert len(fields) == 2
        path = jvm.org.apache.hadoop.fs.Path("/a/b")  # a constructor of a remembered class
        assert path.getName() == "b" and jvm.org.apache.hadoop.fs.Path("/c").getName() == "c"
    finally:
        client.send_command = real_send
    py4j_lookups.install()  # idempotent: not wrapped twice
    assert not hasattr(gw.JVMView.__getattr__.__wrapped__, "__wrapped__")
