#!/usr/bin/env bash
# A single-node Slurm cluster from Debian 12's packages (slurm-wlm, munge;
# ./scripts/setup.sh installs them), everything under one folder:
# its own munge key and socket, slurm.conf, state, spool, logs and PID files.
# Nothing in /etc or /run is used or changed, so it runs beside a real
# installation and leaves nothing behind.
#
#   scripts/slurm-cluster.sh start DIR   start munged, slurmctld and slurmd;
#                                        prints `export SLURM_CONF=DIR/slurm.conf`
#   scripts/slurm-cluster.sh stop DIR    stop them, by the PIDs in DIR/pids; remove
#                                        the key; DIR (logs, state) stays, the user's
#   scripts/slurm-cluster.sh check       why this machine cannot run it (exit 1),
#                                        or nothing (exit 0)
#
# Try the recipes of docs/batch.md on a laptop:
#   d=$(mktemp -d) && scripts/slurm-cluster.sh start "$d" && export SLURM_CONF=$d/slurm.conf
#   sbatch ... ; squeue ; ...
#   scripts/slurm-cluster.sh stop "$d"
#
# The daemons run as root (slurmd must switch to the job's user): directly
# when this script runs as root, else through `sudo -n`. A job runs as the
# user who submits it. The node is this machine, with the CPUs and memory
# that `slurmd -C` reports; ProctrackType=proctrack/linuxproc and
# TaskPlugin=task/none need no cgroups (so no CPU binding: see docs/batch.md).
# Exit status: 0 done, 1 failed (the reason on stderr), 2 bad command line.
set -euo pipefail

die() { echo "slurm-cluster: $*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

# Why the daemons cannot run here, or nothing.
why_not() {
  local p
  for p in munged mungekey slurmctld slurmd sbatch scontrol; do
    command -v "$p" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$p" >/dev/null 2>&1 ||
      { echo "$p is not installed (Debian 12: apt-get install slurm-wlm munge, as ./scripts/setup.sh does)"; return; }
  done
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "not root and no sudo: slurmd must run as root to start jobs"; return; }
    sudo -n true 2>/dev/null || { echo "not root and 'sudo -n true' fails (a password is needed): slurmd must run as root to start jobs"; return; }
  fi
}

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Wait up to $2 seconds for command $1 to succeed.
wait_for() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    eval "$1" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}

# Kill every PID in DIR/pids (TERM, then KILL after 5 s), the daemons' own
# PID files too (slurmd's job steps are its children: it ends them).
stop() {
  local dir=$1 pid pids=() i alive
  [ -f "$dir/pids" ] && while read -r pid; do [ -n "$pid" ] && pids+=("$pid"); done <"$dir/pids"
  for pid in "${pids[@]}"; do as_root kill -TERM "$pid" 2>/dev/null || true; done
  for ((i = 0; i < 50; i++)); do
    alive=0
    for pid in "${pids[@]}"; do as_root kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do as_root kill -KILL "$pid" 2>/dev/null || true; done
  rm -f "$dir/pids"
  # the key goes; what the daemons wrote (logs, state) is handed back to the user
  as_root rm -f "$dir/munge/munge.key" 2>/dev/null || true
  if [ "$(id -u)" -ne 0 ] && [ -d "$dir" ]; then
    as_root chown -R "$(id -u):$(id -g)" "$dir" 2>/dev/null || true
  fi
}

# Record the PID in a daemon's PID file (it writes it once it runs).
record_pid() {
  local file=$1 dir=$2 pid
  wait_for "as_root test -s '$file'" 10 || return 1
  pid=$(as_root cat "$file")
  echo "$pid" >>"$dir/pids"
}

start() {
  local dir=$1 why node cpus mem line user ctlport dport
  why=$(why_not)
  [ -z "$why" ] || die "cannot start a Slurm cluster here: $why"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ ! -s "$dir/pids" ] || die "$dir/pids exists: stop that cluster first (scripts/slurm-cluster.sh stop $dir)"
  mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
  chmod 700 "$dir/munge"
  PATH=$PATH:/usr/sbin
  user=$(id -un)
  node=$(hostname -s)
  # The node's real CPUs and memory (NodeName=... CPUs=2 Boards=1 ... RealMemory=24105)
  line=$(slurmd -C | head -1)
  cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$line")
  mem=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$line")
  [ -n "$cpus" ] && [ -n "$mem" ] || die "slurmd -C printed no CPUs/RealMemory: $line"
  ctlport=$(free_port)
  dport=$(free_port)
  while [ "$dport" = "$ctlport" ]; do dport=$(free_port); done

  # munge: its own key, socket, PID, log and seed files, owned by root.
  as_root chown root:root "$dir/munge"
  as_root mungekey --create --keyfile="$dir/munge/munge.key" --force >/dev/null 2>&1 ||
    as_root dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  as_root chmod 400 "$dir/munge/munge.key"
  # the clients (sbatch, squeue) run as the user and connect to the socket
  as_root chmod 755 "$dir/munge"
  : >"$dir/pids"
  as_root munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" --force ||
    die "munged did not start: $(as_root tail -3 "$dir/munge/munged.log" 2>/dev/null)"
  record_pid "$dir/munge/munged.pid" "$dir" ||
    die "munged wrote no PID file: $(as_root tail -3 "$dir/munge/munged.log" 2>/dev/null)"

  cat >"$dir/slurm.conf" <<EOF
# A single-node test cluster made by scripts/slurm-cluster.sh
ClusterName=rpxtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctlport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
SchedulerParameters=sched_interval=1,batch_sched_delay=0
MinJobAge=600
InactiveLimit=0
KillWait=5
PlugStackConfig=$dir/plugstack.conf
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$dir/plugstack.conf"
  export SLURM_CONF=$dir/slurm.conf
  as_root env SLURM_CONF="$SLURM_CONF" slurmctld -c -f "$SLURM_CONF" ||
    die "slurmctld did not start: $(tail -5 "$dir/log/slurmctld.log" 2>/dev/null)"
  record_pid "$dir/slurmctld.pid" "$dir" || die "slurmctld wrote no PID file: $(tail -5 "$dir/log/slurmctld.log" 2>/dev/null)"
  as_root env SLURM_CONF="$SLURM_CONF" slurmd -f "$SLURM_CONF" -N "$node" ||
    die "slurmd did not start: $(tail -5 "$dir/log/slurmd.log" 2>/dev/null)"
  record_pid "$dir/slurmd.pid" "$dir" || die "slurmd wrote no PID file: $(tail -5 "$dir/log/slurmd.log" 2>/dev/null)"
  wait_for "sinfo -h -N -o %t | grep -Eq '^(idle|mix|alloc)'" 30 ||
    die "the node did not come up idle: $(sinfo -N 2>&1 | tail -2); $(tail -5 "$dir/log/slurmd.log" 2>/dev/null)"
  echo "export SLURM_CONF=$SLURM_CONF"
}

case "${1:-}" in
  start)
    [ $# -eq 2 ] || { echo "usage: $0 start DIR" >&2; exit 2; }
    CLUSTER_DIR=$2
    trap 'stop "$CLUSTER_DIR"' EXIT # a failed start stops what it started
    start "$2"
    trap - EXIT ;;
  stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
  check) why=$(why_not); [ -z "$why" ] || { echo "$why"; exit 1; } ;;
  *) echo "usage: $0 start DIR | stop DIR | check" >&2; exit 2 ;;
esac
