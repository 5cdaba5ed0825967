#!/usr/bin/env bash
# Start (or check) a one-node Slurm cluster on localhost; no systemd needed.
# Idempotent: a second run finds the daemons up and only checks them.
# Env: SLURM_STATE_DIR (default /var/lib/kvtune-slurm) holds state, logs, pids.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${SLURM_STATE_DIR:-/var/lib/kvtune-slurm}
CONF=/etc/slurm/slurm.conf

for b in munged munge slurmctld slurmd sinfo srun scontrol; do
  command -v "$b" >/dev/null || { echo "missing $b; run: apt-get install -y slurm-wlm munge" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "must run as root" >&2; exit 1; }

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }   # pid file -> running?

# 1. munge: key, socket dir, daemon (runs as the munge user).
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=128 status=none
fi
chown munge:munge /etc/munge /etc/munge/munge.key; chmod 700 /etc/munge; chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge; chmod 755 /run/munge
if ! munge -n </dev/null >/dev/null 2>&1; then
  echo "starting munged"; runuser -u munge -- munged
  for _ in $(seq 20); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.25; done
fi
munge -n </dev/null | unmunge >/dev/null

# 2. the hostname must resolve.
HOST=$(hostname -s)   # slurmd names its node after the short hostname
getent hosts "$HOST" >/dev/null || { echo "adding $HOST to /etc/hosts"; echo "127.0.0.1 $HOST" >>/etc/hosts; }

# 3. slurm.conf from the template, sized to what slurmd sees.
CPUS=$(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' | head -1)
MEM=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' | head -1)
mkdir -p /etc/slurm "$STATE"/ctld "$STATE"/spool
NEW=$(sed -e "s|@HOST@|$HOST|g" -e "s|@CPUS@|$CPUS|g" -e "s|@MEMORY_MB@|$MEM|g" \
          -e "s|@STATE@|$STATE|g" -e "s|@USER@|root|g" "$HERE/slurm.conf.in")
if [ "$NEW" != "$(cat "$CONF" 2>/dev/null)" ]; then
  echo "writing $CONF (host $HOST, $CPUS CPUs, $MEM MB)"
  if alive "$STATE/slurmctld.pid" || alive "$STATE/slurmd.pid"; then
    echo "config changed: restarting daemons"; "$HERE/stop-cluster.sh"
  fi
  printf '%s\n' "$NEW" >"$CONF"
fi

# 4. daemons (they fork into the background and write their pid files).
alive "$STATE/slurmctld.pid" || { echo "starting slurmctld"; slurmctld; }
alive "$STATE/slurmd.pid"    || { echo "starting slurmd";    slurmd; }

# 5. wait until the node is idle (a node left down/drained is resumed once).
for i in $(seq 60); do
  st=$(sinfo -h -n "$HOST" -o %T 2>/dev/null || true)
  case "$st" in
    idle|mixed|allocated) break ;;
    down*|drain*) [ "$i" = 10 ] && scontrol update NodeName="$HOST" State=RESUME || true ;;
  esac
  sleep 1
done
case "$st" in idle|mixed|allocated) ;; *)
  echo "node $HOST not ready (state '${st:-none}'); see $STATE/*.log" >&2; exit 1 ;; esac

# 6. smoke test (skipped when jobs fill the node: srun would queue behind them).
if [ "$st" = allocated ]; then echo "slurm up: node $HOST is busy; srun smoke test skipped"; exit 0; fi
out=$(timeout 60 srun -N1 hostname)
echo "slurm up: node $HOST is $st, srun ran on $out"
