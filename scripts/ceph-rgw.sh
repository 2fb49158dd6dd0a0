#!/usr/bin/env bash
# A private Ceph cluster with an S3 gateway on loopback, for tests and for trying the S3 archive by hand: one
# monitor, one BlueStore OSD on a sparse file, one RADOS Gateway (Debian's ceph-mon, ceph-osd, radosgw and
# ceph-common), all in DIR and all bound to 127.0.0.1, run as this script's own processes.
#
#   scripts/ceph-rgw.sh DIR     starts the cluster, creates an S3 user and the bucket `timeseal`, prints one
#                               line `ready endpoint=URL access_key=K secret_key=S bucket=B` on stdout, then
#                               keeps running; it kills every daemon (by process id) and removes DIR when its
#                               stdin closes or it gets SIGTERM/SIGINT. Daemon logs are in DIR/log.
#   CEPH_RGW_UNTIL_PID=PID      instead of stdin, runs until process PID ends (test/support/ceph-rgw.ts: one
#                               cluster for every file of a test run).
#
# Settings a one-OSD throwaway cluster needs (learnt the hard way):
# - `auth none`, and with it `ms_mon_client_mode = crc` in every daemon: without it the gateway retries its
#   monitor session for 300 s ("get_initial_auth_request returned -13");
# - the BlueStore block file outside the OSD's data folder (mkfs treats an unknown file there as a leftover);
# - pools of size 1 (`mon_allow_pool_size_one`) and a few placement groups each, so that the gateway's pools
#   are created and active within seconds.
# - the monitor proposing changes every 50 ms instead of every second: the gateway creates its pools one map
#   change at a time, so this halves the start (about 13 s instead of 27 here).
# - no debug logging in any daemon: creating 791 objects (a day of 100,000 hashes) took 3.8-4.5 s instead of
#   6.0-7.3 s here.
# - 4 gateway threads (rgw_thread_pool_size; Ceph's default 512 is for a gateway with cores of its own): publishing
#   a day of 1,000,000 hashes (7,843 objects) took 13 s of the gateway's CPU instead of 20 here.
# Never use this configuration outside tests: anyone who reaches the ports could use the cluster.
set -euo pipefail

dir=${1:?usage: scripts/ceph-rgw.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p "$dir"/{log,run,mon/ceph-a,osd/ceph-0,rgw}

pids=()
stop() {
  trap '' TERM INT
  trap - EXIT
  # Nothing of the cluster is kept, so nothing needs a clean shutdown: each daemon is killed by its process id
  # and waited for, then the folder goes.
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
  # The lock of the test files that share the cluster (test/support/ceph-rgw.ts), when there is one.
  if [ -n "${CEPH_RGW_UNTIL_PID:-}" ]; then rm -f "$dir.lock" "$dir.lock.sqlite"; fi
}
trap stop EXIT
failed() {
  echo "ceph-rgw: failed at line $1; the end of each daemon's log:" >&2
  for log in "$dir"/log/*; do echo "--- $(basename "$log")" >&2; tail -n 15 "$log" >&2; done
}
trap 'failed $LINENO' ERR
trap 'exit 143' TERM INT

# Three free ports on 127.0.0.1 (monitor v2, monitor v1, gateway), asked of the kernel.
read -r mon2 mon1 rgw < <(/usr/bin/python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
EOF
)

fsid=$(cat /proc/sys/kernel/random/uuid)
conf="$dir/ceph.conf"
cat >"$conf" <<EOF
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$mon2,v1:127.0.0.1:$mon1]
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_ipv6 = false
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
ms_mon_client_mode = crc
run_dir = $dir/run
admin_socket = $dir/run/\$name.asok
pid_file = $dir/run/\$name.pid
log_file = $dir/log/\$name.log
# No debug logging (Ceph's defaults gather some in memory for every request): a third less time per PUT here.
debug_rgw = 0/0
debug_ms = 0/0
debug_osd = 0/0
debug_bluestore = 0/0
debug_bluefs = 0/0
debug_bdev = 0/0
debug_rocksdb = 0/0
debug_objecter = 0/0
debug_rados = 0/0
debug_monc = 0/0
debug_mon = 0/0
debug_paxos = 0/0
debug_finisher = 0/0
crash_dir = $dir/run/crash
mon_data = $dir/mon/\$cluster-\$id
osd_data = $dir/osd/\$cluster-\$id
rgw_data = $dir/rgw
bluestore_block_path = $dir/osd-\$id.block
bluestore_block_size = 10737418240
bluestore_block_create = true
osd_objectstore = bluestore
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_osd_min_in_ratio = 0
osd_memory_target = 1073741824
bluestore_cache_autotune = false
bluestore_cache_size = 134217728
rgw_frontends = beast endpoint=127.0.0.1:$rgw
rgw_dns_name = 127.0.0.1
rgw_enable_usage_log = false
# The gateway's threads (its requests' coroutines wait for RADOS without holding one): see the header.
rgw_thread_pool_size = 4
paxos_propose_interval = 0.05
paxos_min_wait = 0.01
EOF

ceph() { /usr/bin/ceph -c "$conf" --connect-timeout 30 "$@"; }
# Waits until "$@" succeeds (each try a fresh command), for at most $1 seconds.
until_ok() {
  local limit=$1; shift
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then echo "ceph-rgw: timed out after ${limit}s waiting for: $*" >&2; return 1; fi
    sleep 0.2
  done
}

# The monitor.
monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon2,v1:127.0.0.1:$mon1]" "$dir/monmap" >/dev/null
ceph-authtool --create-keyring "$dir/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/mon.keyring"
ceph-mon -c "$conf" -i a -f </dev/null >>"$dir/log/mon.a.out" 2>&1 &
pids+=($!)
until_ok 60 ceph mon stat

# The OSD: a BlueStore on a sparse 10 GiB file beside (not inside) its data folder.
uuid=$(cat /proc/sys/kernel/random/uuid)
id=$(ceph osd new "$uuid")
ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$uuid" >>"$dir/log/osd.$id.out" 2>&1
ceph-osd -c "$conf" -i "$id" -f </dev/null >>"$dir/log/osd.$id.out" 2>&1 &
pids+=($!)
osd_up() { ceph osd dump --format json | grep -q '"up":1'; }
until_ok 120 osd_up

# The gateway, and its user (radosgw-admin writes the user into the cluster; the gateway reads it from there).
radosgw -c "$conf" -n client.rgw.a -f </dev/null >>"$dir/log/rgw.a.out" 2>&1 &
pids+=($!)
endpoint="http://127.0.0.1:$rgw"
until_ok 120 curl -sf -o /dev/null "$endpoint/"
access=$(head -c 10 /dev/urandom | od -An -tx1 | tr -d ' \n')
secret=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
radosgw-admin -c "$conf" user create --uid timeseal --display-name timeseal --access-key "$access" --secret "$secret" >/dev/null
bucket=timeseal
status=$(curl -sS -o "$dir/log/bucket.out" -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
  -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' --user "$access:$secret" "$endpoint/$bucket")
if [ "$status" != 200 ]; then echo "ceph-rgw: creating bucket $bucket answered $status: $(cat "$dir/log/bucket.out")" >&2; exit 1; fi

echo "ready endpoint=$endpoint access_key=$access secret_key=$secret bucket=$bucket"
if [ -n "${CEPH_RGW_UNTIL_PID:-}" ]; then
  # Until that process ends (a test run whose files share the cluster), or a signal. Its start time is read
  # at first, so that another process given the same id later does not keep the cluster up.
  started() { sed 's/^.*) //' "/proc/$CEPH_RGW_UNTIL_PID/stat" 2>/dev/null | cut -d' ' -f20; }
  owner=$(started)
  while [ -n "$owner" ] && [ "$(started)" = "$owner" ]; do sleep 1; done
else
  # Until the caller closes stdin (or is gone) or signals.
  read -r _ || true
fi
