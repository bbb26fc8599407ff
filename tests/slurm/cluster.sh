#!/usr/bin/env bash
# tests/slurm/cluster.sh start DIR [NODES] | stop DIR — a Slurm cluster on localhost for tests.
#
# start: writes DIR/slurm.conf (NODES nodes, default 1, named kc1.. kcN, each with this machine's CPUs
# and 1/(2 NODES) of its memory, one partition "kc" with MaxTime 1 hour), a munge key, and starts
# munged, slurmctld and one slurmd per node directly (no systemd), all state under DIR.  The nodes
# are several slurmd on this machine: each its own NodeName (slurmd -N kcK), its own Port, spool
# folder, log and pid file (%n in slurm.conf), all with NodeHostname=localhost.
# Prints "export SLURM_CONF=DIR/slurm.conf" on success; exits 3 with the reason when the cluster
# cannot run here (not root, packages missing, a daemon does not come up).
# stop: kills the daemons it started (their pid files under DIR), nothing else.
set -u -o pipefail
cmd=${1:-} dir=${2:-} nodes=${3:-1}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start DIR [NODES] | stop DIR" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

stop() {
  local f p pid
  for f in "$dir"/slurmd-*.pid "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    rm -f "$f"
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
mem=$(awk -v n="$nodes" '/MemTotal/ {print int($2 / 1024 / 2 / n)}' /proc/meminfo)
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
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
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
EOF
names=
for k in $(seq "$nodes"); do
  echo "NodeName=kc$k NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((port + k)) CPUs=$cpus RealMemory=$mem State=UNKNOWN" >> "$dir/slurm.conf"
  names=$names${names:+,}kc$k
  mkdir -p "$dir/spool/kc$k"
done
echo "PartitionName=kc Nodes=$names Default=YES MaxTime=01:00:00 State=UP" >> "$dir/slurm.conf"
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF" -i 2>"$dir/log/slurmctld.err" || unavailable "slurmctld did not start: $(tail -n 2 "$dir/log/slurmctld.err" "$dir/log/slurmctld.log" 2>/dev/null | tail -n 1)"
for k in $(seq "$nodes"); do
  slurmd -N kc$k -f "$SLURM_CONF" 2>>"$dir/log/slurmd.err" || unavailable "slurmd -N kc$k did not start: $(tail -n 1 "$dir/log/slurmd.err")"
done
for _ in $(seq 100); do
  st=$(sinfo -h -N -o '%T' 2>/dev/null | sort | uniq -c | awk '{print $2 "x" $1}' | paste -sd' ')
  [ "$st" = "idlex$nodes" ] && { echo "export SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 0.2
done
unavailable "$nodes node(s) not idle after 20 s (states: ${st:-?}): $(tail -q -n 1 "$dir"/log/slurmd-*.log 2>/dev/null | tail -n 1)"
