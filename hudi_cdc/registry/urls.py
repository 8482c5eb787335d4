"""Registry URLs: credentials out of messages, path parts quoted (hudi_cdc/http.py does both)."""

from __future__ import annotations

from hudi_cdc.http import quote_part, redact

__all__ = ["quote_part", "redact"]
