"""Shared fixtures. Test modules of each feature may add fixtures in tests/plugins/*.py (auto-loaded)."""

from pathlib import Path

_plugins = sorted(p.stem for p in (Path(__file__).parent / "plugins").glob("*.py") if p.stem != "__init__")
pytest_plugins = [f"tests.plugins.{name}" for name in _plugins]
