#!/usr/bin/env bash
# Debian packages the tests use as independent cross-checks: openssl (ECDSA), python3-opentimestamps (OTS),
# chromium (browser tests). Installed with apt-get when missing, so a fresh machine passes `make test`.
set -euo pipefail
need=()
command -v openssl >/dev/null 2>&1 || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing test tools: ${need[*]} (install them with apt-get)" >&2
    exit 1
  fi
fi
