#!/usr/bin/env bash
# tests/slurm/cluster.sh start DIR | stop DIR — a one-node Slurm cluster on localhost for tests.
#
# start: writes DIR/slurm.conf (one node "localhost" with this machine's CPUs, one partition "kc"),
# a munge key, and starts munged, slurmctld and slurmd directly (no systemd), all state under DIR.
# Prints "export SLURM_CONF=DIR/slurm.conf" on success; exits 3 with the reason when the cluster
# cannot run here (not root, packages missing, a daemon does not come up).
# stop: kills the daemons it started (their pid files under DIR), nothing else.
set -u -o pipefail
cmd=${1:-} dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

stop() {
  for p in slurmd slurmctld munged; do
    [ -f "$dir/$p.pid" ] || continue
    pid=$(cat "$dir/$p.pid")
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    rm -f "$dir/$p.pid"
  done
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

unavailable() { echo "cluster unavailable: $*" >&2; stop; exit 3; }
[ "$(id -u)" = 0 ] || unavailable "not root (slurmd must run as root)"
for b in munged slurmctld slurmd sbatch squeue scancel; do
  command -v $b >/dev/null || [ -x /usr/sbin/$b ] || unavailable "$b not installed (apt-get install $(cat "$(dirname "$0")/../../deps-slurm.txt" 2>/dev/null | tr '\n' ' '))"
done
export PATH=$PATH:/usr/sbin

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir/munge"
[ -f "$dir/munge/munge.key" ] || { dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null; chmod 400 "$dir/munge/munge.key"; }
sock=$dir/munge/munge.socket
munged --force -S "$sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/munged.pid" \
       --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" 2>"$dir/log/munged.err" \
  || unavailable "munged did not start: $(tail -n 1 "$dir/log/munged.err")"

cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
port=$((6900 + RANDOM % 500))
cat > "$dir/slurm.conf" <<EOF
ClusterName=kctest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$sock
CryptoType=crypto/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerParameters=defer_batch=0
MaxArraySize=100001
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=kc Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF" -i 2>"$dir/log/slurmctld.err" || unavailable "slurmctld did not start: $(tail -n 2 "$dir/log/slurmctld.err" "$dir/log/slurmctld.log" 2>/dev/null | tail -n 1)"
slurmd -f "$SLURM_CONF" 2>"$dir/log/slurmd.err" || unavailable "slurmd did not start: $(tail -n 1 "$dir/log/slurmd.err")"
for _ in $(seq 100); do
  st=$(sinfo -h -N -o '%T' 2>/dev/null | head -n 1)
  case $st in idle*|mixed*|allocated*) echo "export SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
  sleep 0.2
done
unavailable "node not idle after 20 s (state '${st:-?}'): $(tail -n 2 "$dir/log/slurmd.log" 2>/dev/null | tail -n 1)"
