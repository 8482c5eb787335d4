"""Where the project's shared material lives (fixture tables, seed texts): $HUDI_CDC_SHARED, else
`shared/` beside the checkout."""

import os
from pathlib import Path

SHARED = Path(os.environ.get("HUDI_CDC_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")
