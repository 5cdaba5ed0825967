#!/usr/bin/env bash
# Stop slurmd and slurmctld started by start-cluster.sh; munged is left running.
set -euo pipefail
STATE=${SLURM_STATE_DIR:-/var/lib/kvtune-slurm}
for d in slurmd slurmctld; do
  pidf=$STATE/$d.pid
  [ -s "$pidf" ] && pid=$(cat "$pidf") && kill -0 "$pid" 2>/dev/null || { echo "$d not running"; continue; }
  echo "stopping $d ($pid)"; kill -TERM "$pid"
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$pid" 2>/dev/null && { echo "$d still up, SIGKILL"; kill -KILL "$pid"; }
  rm -f "$pidf"
done
