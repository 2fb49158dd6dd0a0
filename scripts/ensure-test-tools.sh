#!/usr/bin/env bash
# Debian packages the tests use as independent cross-checks, installed with apt-get when missing so a fresh
# machine passes `make test`: openssl (ECDSA signatures), python3-opentimestamps (the OpenTimestamps reference
# library, for .ots files), chromium-headless-shell (the browser tests: test/support/chromium.ts), postgresql (a private
# PostgreSQL cluster per test run: test/support/postgres.ts), nginx (the several-node topology in deploy/),
# poppler-utils (pdftotext reads the PDF certificates), faketime (a node whose clock is off, for the clock
# check against the database's), strace (it watches the key files' fsyncs: runtime/durable-keys.test.ts) and
# openjdk-17-jdk-headless (keytool, jar and jarsigner: Java's RFC 3161
# client signs and verifies a jar against `timeseal serve`'s POST /tsa), ceph-mon, ceph-osd, radosgw and
# ceph-common (a private Ceph cluster whose RADOS Gateway is the real S3 store of the archive's S3 engine:
# scripts/ceph-rgw.sh), curl (that script creates the test bucket with it), and for the timestamped PDFs qpdf
# (`qpdf --check`, and it makes PDFs with object streams and encryption), Apache PDFBox 2 and Bouncy Castle's
# PKIX (libpdfbox2-java, libbcpkix-java: a signature made before Timeseal's time-stamp, by a tool we did not
# write; poppler-utils' pdfsig then validates both).
set -euo pipefail
need=()
command -v openssl >/dev/null 2>&1 || need+=(openssl)
/usr/bin/python3 -c 'import opentimestamps' >/dev/null 2>&1 || need+=(python3-opentimestamps)
/usr/bin/python3 -c 'import prometheus_client' >/dev/null 2>&1 || need+=(python3-prometheus-client)
[ -x /usr/bin/chromium-headless-shell ] || need+=(chromium-headless-shell)
fc-list 2>/dev/null | grep -qi dejavu || need+=(fonts-dejavu-core)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
[ -x /usr/sbin/nginx ] || need+=(nginx)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
command -v faketime >/dev/null 2>&1 || need+=(faketime)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v jarsigner >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
command -v qpdf >/dev/null 2>&1 || need+=(qpdf)
[ -f /usr/share/java/pdfbox2.jar ] || need+=(libpdfbox2-java)
[ -f /usr/share/java/bcpkix.jar ] || need+=(libbcpkix-java)
[ -x /usr/bin/ceph-mon ] || need+=(ceph-mon)
[ -x /usr/bin/ceph-osd ] || need+=(ceph-osd)
[ -x /usr/bin/radosgw ] || need+=(radosgw)
[ -x /usr/bin/radosgw-admin ] || need+=(ceph-common)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing test tools: ${need[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing test tools: ${need[*]} (install them with apt-get)" >&2
    exit 1
  fi
fi
