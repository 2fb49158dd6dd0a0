#!/bin/sh
# `make start`: one machine, everything local. Creates development keys if absent, then runs `timeseal serve`
# on PORT (default 8080) with the demonstration ledger on an empty archive (see README). Build happens first
# in the Makefile.
set -e
bin=pipeline/bin/timeseal
if [ ! -f "${TIMESEAL_KEYS:-keys}/public.pem" ]; then
  "$bin" keys init
fi
exec "$bin" serve --demo
