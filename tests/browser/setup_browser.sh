#!/usr/bin/env bash
# Install the Chromium that the browser tests (tests/browser/) drive headless,
# from Debian's packages (apt-get install chromium), and check that it starts.
#
#   bash tests/browser/setup_browser.sh
#
# A Chromium already on PATH (chromium, chromium-browser, google-chrome) or
# named by $BUDGETLINT_CHROMIUM is reused. apt-get needs root (or sudo -n).
# Exits 0 when a Chromium runs headless afterwards, 1 otherwise (with why).
set -uo pipefail

find_browser() {
  if [[ -n "${BUDGETLINT_CHROMIUM:-}" ]]; then
    command -v "$BUDGETLINT_CHROMIUM" && return 0
    return 1
  fi
  local name
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$name" && return 0
  done
  return 1
}

runs_headless() {
  local out
  out="$(timeout 60 "$1" --headless --no-sandbox --disable-gpu --dump-dom about:blank 2>/dev/null)" || return 1
  [[ "$out" == *"<html"* ]]
}


if browser="$(find_browser)"; then
  if runs_headless "$browser"; then
    echo "setup_browser: reusing $browser ($("$browser" --version 2>/dev/null | head -1))"
    exit 0
  fi
  echo "setup_browser: $browser is there but does not run headless; trying to (re)install" >&2
fi

if [[ "$(id -u)" == "0" ]]; then
  SUDO=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "setup_browser: cannot install chromium: apt-get needs root and sudo is not available" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "setup_browser: cannot install chromium: no apt-get (install Chromium yourself, or set BUDGETLINT_CHROMIUM)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! "${SUDO[@]}" apt-get update -q >/dev/null || \
   ! "${SUDO[@]}" apt-get install -y -q chromium fonts-dejavu-core >/dev/null; then
  echo "setup_browser: apt-get install chromium failed" >&2
  exit 1
fi
if browser="$(find_browser)" && runs_headless "$browser"; then
  echo "setup_browser: installed $browser ($("$browser" --version 2>/dev/null | head -1))"
  exit 0
fi
echo "setup_browser: chromium was installed but does not run headless" >&2
exit 1
