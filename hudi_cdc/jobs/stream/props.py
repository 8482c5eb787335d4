"""A target's properties: the rendered file with its includes, then the --hoodie-conf overrides."""

from __future__ import annotations

from hudi_cdc.common import properties
from hudi_cdc.jobs.stream.argv import Target
from hudi_cdc.jobs.stream.errors import JobInputError


def load_properties(path: str) -> dict[str, str]:
    """The streamer properties file (DFSPropertiesConfiguration's dialect), includes resolved."""
    try:
        return properties.load_properties(path)
    except properties.PropertiesError as exc:
        raise JobInputError(str(exc)) from None


def target_properties(t: Target) -> dict[str, str]:
    props = load_properties(t.props)
    for kv in t.hoodie_conf:
        k, _, v = kv.partition("=")
        props[k.strip()] = v.strip()
    return props


def streamer_prop(props: dict[str, str], name: str) -> str | None:
    """hoodie.streamer.<name>, falling back to the pre-0.14 hoodie.deltastreamer.<name>."""
    return props.get(f"hoodie.streamer.{name}") or props.get(f"hoodie.deltastreamer.{name}")
