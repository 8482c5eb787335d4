#!/usr/bin/env bash
# Install what the `browser` tests need (idempotent): Debian's chromium (headless, /usr/bin/chromium)
# and the Python `playwright` client, which drives that chromium over the Chrome DevTools Protocol
# (executable_path=/usr/bin/chromium). Playwright's own browser downloads are never used.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

if [ -x /usr/bin/chromium ]; then
  echo "install-chromium: $(/usr/bin/chromium --version 2>/dev/null || echo chromium) is installed"
else
  echo "install-chromium: apt-get install chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi

if "$PY" -c 'import playwright' >/dev/null 2>&1; then
  echo "install-chromium: playwright is installed"
else
  # the same pin as pyproject's extra `test`; PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: Debian's chromium only
  echo "install-chromium: pip install playwright"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$PY" -m pip install -q --disable-pip-version-check "playwright>=1.45"
fi
