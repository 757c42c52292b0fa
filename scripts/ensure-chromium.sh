#!/usr/bin/env bash
# The console's browser tests drive Debian's Chromium (playwright-core downloads no browser):
# installed here when absent, so that `npm test` alone runs every test on a fresh machine.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian's chromium for the console tests…" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "the console tests need /usr/bin/chromium: install Debian's chromium package (sudo apt-get install chromium)" >&2
  exit 1
fi
