#!/usr/bin/env bash
# Prometheus and promtool for tests/slo/ (Debian's package `prometheus`): the exported rule
# files are checked with `promtool check rules` / `promtool test rules`, and the live test
# starts a real server on 127.0.0.1 scraping a fake engine. Idempotent; run from .ci/run
# (under CI=true a failure here fails the run).
set -euo pipefail
if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
    echo "prometheus: $(prometheus --version 2>&1 | head -1)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "prometheus: no apt-get on this machine; install the Prometheus server and promtool" >&2
    exit 1
fi
SUDO=""
if [[ "$(id -u)" != "0" ]]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends prometheus
# the package starts a system service on :9090 where systemd runs; the tests start their own
# server on a free port, so stop it where it can be stopped (and ignore where it cannot)
$SUDO systemctl stop prometheus >/dev/null 2>&1 || true
command -v prometheus >/dev/null && command -v promtool >/dev/null
echo "prometheus: $(prometheus --version 2>&1 | head -1)"
