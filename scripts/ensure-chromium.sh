#!/bin/sh
# Browser tests drive Debian's Chromium through playwright-core (never a downloaded browser).
# Installs it when missing and possible (root with apt-get); otherwise says what to do.
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  echo "Installing chromium from apt for the browser tests…"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null && exit 0
fi
echo "The browser tests need Chromium at $CHROMIUM: install Debian's 'chromium' package" >&2
echo "(sudo apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary." >&2
exit 1
