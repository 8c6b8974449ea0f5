#!/usr/bin/env bash
# Install the Chromium that the browser tests (tests/browser/) drive headless,
# from Debian's packages (apt-get install chromium), and check that it starts.
#
#   bash tests/browser/setup_browser.sh
#
# A Chromium already on PATH (chromium, chromium-browser, google-chrome) or
# named by $BUDGETLINT_CHROMIUM is reused. apt-get needs root (or sudo -n).
# Also Mermaid (npm, into .venvs/mermaid) for the markdown chart's test.
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

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MERMAID_VERSION=11.17.2  # the Mermaid that draws the markdown's chart in the tests (GitHub renders with its own)
MERMAID_DIR="$REPO/.venvs/mermaid"

# Mermaid from npm, to render the markdown format's xychart in the browser test
setup_mermaid() {
  if [[ -f "$MERMAID_DIR/node_modules/mermaid/dist/mermaid.min.js" ]] && \
     grep -q "\"version\": \"$MERMAID_VERSION\"" "$MERMAID_DIR/node_modules/mermaid/package.json"; then
    echo "setup_browser: reusing mermaid $MERMAID_VERSION"
    return 0
  fi
  if ! command -v npm >/dev/null; then
    echo "setup_browser: cannot install mermaid: no npm" >&2
    return 1
  fi
  mkdir -p "$MERMAID_DIR"
  (cd "$MERMAID_DIR" && npm install --no-audit --no-fund --silent "mermaid@$MERMAID_VERSION") || {
    echo "setup_browser: npm install mermaid@$MERMAID_VERSION failed" >&2
    return 1
  }
  echo "setup_browser: installed mermaid $MERMAID_VERSION"
}
setup_mermaid || exit 1

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
