"""The query commands' errors: each a HudiCdcError, so the CLI prints one line and exits non-zero."""

from hudi_cdc.errors import ConfigError, TableStateError


class BadTimeError(ConfigError):
    """A time the user gave cannot be read, or a range runs backwards."""


class BadKeyError(ConfigError):
    """A record key or --where filter that does not fit the table."""


class BeforeFirstCommitError(TableStateError):
    """The time asked for is before the table's first completed commit."""


class UnknownKeyError(TableStateError):
    """No commit of the table ever held the record asked for."""


class NativeUnsupported(ConfigError):
    """The native engine (hudi-rs) cannot do what was asked; the message says what to use instead."""
