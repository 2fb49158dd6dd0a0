#!/bin/sh
# `make start`: one machine, everything local. Creates development keys if absent, then runs `timeseal serve`
# on PORT (default 8080) with the demonstration ledger on an empty archive (see README). Keys come before the
# build because the offline verifier embeds the public keys.
set -e
bin=cli/bin/timeseal
if [ ! -f "${TIMESEAL_KEYS:-keys}/public.pem" ]; then
  "$bin" keys init
fi
node scripts/build.ts --if-changed
exec "$bin" serve --demo
