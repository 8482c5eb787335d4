"""Registry URLs: credentials out of messages, path parts quoted."""

from __future__ import annotations

import re
from urllib.parse import quote


def redact(url: str) -> str:
    """A URL fit for messages: user-info removed."""
    return re.sub(r"://[^/@]*@", "://", url)


def quote_part(part: str) -> str:
    return quote(str(part), safe="")
