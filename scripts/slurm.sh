#!/usr/bin/env bash
# A real single-node Slurm on this machine, for tests of the Slurm executor:
# munged, slurmctld and slurmd started directly (no systemd), as root, with
# every file of theirs in one private state folder.
#
# Usage: slurm.sh install [STATE_DIR]  install slurm-wlm and munge (apt-get) when missing
#        slurm.sh start [STATE_DIR]    install when missing, start, wait
#        slurm.sh stop [STATE_DIR]     cancel the jobs, stop the daemons
#        slurm.sh status [STATE_DIR]   which daemons run; exit 0 when all do
#
# STATE_DIR defaults to $SPARKTEST_SLURM_DIR, else /tmp/sparktest-slurm. It
# holds slurm.conf, the munge key and socket, the daemons' state, spool, logs
# and pid files, and the job completion log (jobcomp.txt). `start` and `stop`
# are idempotent: `start` on a running cluster prints its keys again, `stop`
# on a stopped one does nothing. `stop` cancels every job first (their
# processes would outlive slurmd), and ends what is left of them when
# slurmctld was already gone. `start` after `stop` keeps the state folder,
# so slurmctld remembers its finished jobs and job ids go on from where
# they were; remove the folder for a fresh cluster. Jobs it recovers as
# running whose processes are gone (an unclean stop) are cancelled.
#
# `start` prints nothing on stdout but `key=value` lines:
#   slurm-conf=/…/slurm.conf   export as SLURM_CONF for sbatch, squeue, scontrol…
#   partition=sparktest        the only partition (the default one)
#   node=<hostname -s>         the only node, NodeAddr=127.0.0.1
#   cpus=2  memory-mb=24105    the node as slurmd -C sees it
#   jobcomp=/…/jobcomp.txt     one line per finished job (jobcomp/filetxt)
#   state-dir=/…               the state folder
# Progress and errors go to stderr, one line each, prefixed `slurm:`.
#
# Settings a test should know (see the slurm.conf written below):
# - cgroups are not used (ProctrackType=proctrack/linuxproc, TaskPlugin=
#   task/none): CPUs and memory are counted, not enforced.
# - Two 1-CPU jobs run at once (cons_tres, CR_CPU_Memory, DefMemPerCPU=512).
# - A requeued job waits cred_expire (AuthInfo, 5 s here, the least Slurm
#   takes; its default is 120 s) before it may start again, and the main
#   scheduler runs every second (sched_interval=1; 60 s by default) to start
#   it then.
# - KillWait=30 (Slurm's default): SIGTERM, then SIGKILL 30 s later, on
#   scancel, requeue or a time limit. At 5 s a campaign cancelled while a
#   full test run loaded the box was killed before it wrote its end.
# - There is no slurmdbd, so no sacct (it prints "Slurm accounting storage
#   is disabled" and exits 0): a finished job stays in `scontrol show job`
#   and `squeue -t all` for MinJobAge (3600 s here) and its final state is
#   appended to jobcomp.txt.
# - Time limits are in whole minutes and checked about every 30 s.
# - SLURM_CTLD_PORT / SLURM_SLURMD_PORT (default 6817 / 6818) move the ports
#   when another Slurm listens there.
set -euo pipefail

prefix=slurm
started=$SECONDS
log() { printf '%s\n' "$prefix: $*" >&2; }
stage() { log "[$((SECONDS - started))s] $*"; }
die() { log "$*"; exit 1; }
need() { command -v "$1" >/dev/null 2>&1; }

usage="usage: slurm.sh install|start|stop|status [STATE_DIR]"
[ $# -ge 1 ] && [ $# -le 2 ] || die "$usage"
command=$1
dir=${2:-${SPARKTEST_SLURM_DIR:-/tmp/sparktest-slurm}}
case $command in install | start | stop | status) ;; *) die "$usage" ;; esac
dir=$(realpath -m "$dir")

conf="$dir/slurm.conf"
partition=sparktest
node=$(hostname -s)
ctld_port=${SLURM_CTLD_PORT:-6817}
slurmd_port=${SLURM_SLURMD_PORT:-6818}
socket="$dir/munge/munge.socket"
# Every client command of ours reads this cluster's configuration, not
# /etc/slurm/slurm.conf.
export SLURM_CONF=$conf

# A daemon's pid from its pid file, when that process still runs the
# daemon's program (a stale file may name a pid that was reused).
pid_of() { # pid-file program
  local pid exe bin
  [ -f "$1" ] || return 1
  bin=$(command -v "$2") || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  # A daemon started before its package was upgraded runs a deleted file.
  [ "${exe% (deleted)}" = "$(realpath "$bin")" ] || return 1
  echo "$pid"
}

munged_pid() { pid_of "$dir/munge/munged.pid" munged; }
ctld_pid() { pid_of "$dir/slurmctld.pid" slurmctld; }
slurmd_pid() { pid_of "$dir/slurmd.pid" slurmd; }

# TERM, then KILL what has not gone after `grace` seconds; each is
# name:pid. Together, since each daemon takes seconds to shut down.
end_processes() { # grace name:pid...
  local grace=$1 i entry alive
  shift
  for entry in "$@"; do kill -TERM "${entry#*:}" 2>/dev/null || true; done
  for ((i = 0; i <= grace * 10; i++)); do
    alive=()
    for entry in "$@"; do
      if kill -0 "${entry#*:}" 2>/dev/null; then alive+=("$entry"); fi
    done
    [ "${#alive[@]}" = 0 ] && break
    sleep 0.1
  done
  for entry in "$@"; do
    if kill -0 "${entry#*:}" 2>/dev/null; then
      log "${entry%:*} (pid ${entry#*:}) still runs ${grace}s after SIGTERM; sending SIGKILL"
      kill -KILL "${entry#*:}" 2>/dev/null || true
    else
      stage "stopped ${entry%:*} (pid ${entry#*:})"
    fi
  done
}

# slurmstepd processes (one per running job step) outlive slurmd: find ours
# by the socket each keeps in our spool folder (<node>_<job>.<step>).
stepds() {
  local sock inode pid
  for sock in "$dir/spool/${node}_"*; do
    [ -S "$sock" ] || continue
    inode=$(awk -v path="$sock" '$8 == path { print $7 }' /proc/net/unix | head -n1)
    [ -n "$inode" ] || continue
    for pid in /proc/[0-9]*; do
      if ls -l "$pid/fd" 2>/dev/null | grep -q "socket:\[$inode\]"; then
        echo "${pid#/proc/}"
      fi
    done
  done | sort -u
}

descendants() { # pid
  local child
  for child in $(ps -o pid= --ppid "$1"); do
    echo "$child"
    descendants "$child"
  done
}

print_keys() {
  echo "slurm-conf=$conf"
  echo "partition=$partition"
  echo "node=$node"
  echo "cpus=$(sed -n 's/^NodeName=.* CPUs=\([0-9]*\).*/\1/p' "$conf")"
  echo "memory-mb=$(sed -n 's/^NodeName=.* RealMemory=\([0-9]*\).*/\1/p' "$conf")"
  echo "jobcomp=$dir/jobcomp.txt"
  echo "state-dir=$dir"
}

# The node's state as sinfo says it (idle, mixed, down*, …), or nothing
# while slurmctld does not answer.
node_state() { sinfo -h -N -n "$node" -o %t 2>/dev/null | head -n1 || true; }

# Whether something listens on a TCP port of this machine.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

install_packages() {
  local missing=() tool
  for tool in munged slurmctld slurmd sbatch; do need "$tool" || missing+=("$tool"); done
  [ "${#missing[@]}" = 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! need apt-get; then
    die "missing ${missing[*]}: install them (Debian: apt-get install slurm-wlm munge) and run again"
  fi
  stage "installing slurm-wlm and munge with apt-get (missing ${missing[*]})"
  export DEBIAN_FRONTEND=noninteractive
  # Their postinst scripts try to start the services: policy-rc.d (or the
  # lack of an init) refuses, which is what we want; this script starts them.
  apt-get -o DPkg::Lock::Timeout=300 update -qq >"$dir/apt.log" 2>&1 \
    || { tail -n 20 "$dir/apt.log" >&2; die "apt-get update failed (log: $dir/apt.log)"; }
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends slurm-wlm munge \
    >>"$dir/apt.log" 2>&1 \
    || { tail -n 20 "$dir/apt.log" >&2; die "apt-get install slurm-wlm munge failed (log: $dir/apt.log)"; }
  for tool in munged slurmctld slurmd sbatch; do
    need "$tool" || die "$tool is still missing after apt-get install slurm-wlm munge"
  done
}

write_conf() {
  local hw
  # The node as slurmd itself will register it: a node configured with more
  # CPUs or memory than slurmd finds is drained as invalid.
  hw=$(slurmd -C | sed -n 's/^NodeName=[^ ]* \(.*\)$/\1/p')
  [ -n "$hw" ] || die "slurmd -C printed no NodeName line"
  cat >"$conf.tmp" <<EOF
# Written by scripts/slurm.sh start; rewritten on every start.
ClusterName=sparktest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
# Our own munged, on its own socket. A requeued job waits cred_expire
# seconds before it may start again: Slurm's default is 120, 5 its least.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket,cred_expire=5
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups here: processes are tracked through /proc, nothing is confined.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# CPUs and memory are the consumable resources, so two 1-CPU jobs share the
# node; a job that asks for no memory gets DefMemPerCPU, not the whole node.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=512
# Nothing wakes the scheduler when a requeued job's begin time passes: the
# main loop (every sched_interval, 60 s by default) starts it, or the next
# submission or job end does.
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1,sched_min_interval=0
# No slurmdbd: no sacct. Finished jobs stay in scontrol show job for
# MinJobAge seconds, and each one's final state is appended to jobcomp.txt.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
MinJobAge=3600
# SIGTERM, then SIGKILL KillWait seconds later (scancel, requeue, time limit).
KillWait=30
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=$partition Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$conf.tmp" "$conf"
}

start_munged() {
  if munged_pid >/dev/null; then return 0; fi
  if [ ! -s "$dir/munge/munge.key" ]; then
    mungekey --create --keyfile="$dir/munge/munge.key" \
      || die "mungekey could not create $dir/munge/munge.key"
  fi
  chmod 600 "$dir/munge/munge.key"
  rm -f "$socket" "$socket.lock"
  munged --key-file="$dir/munge/munge.key" --socket="$socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" \
    || { tail -n 5 "$dir/munge/munged.log" >&2 2>/dev/null; die "munged did not start (log: $dir/munge/munged.log)"; }
  stage "started munged (socket $socket)"
}

start_ctld() {
  if ctld_pid >/dev/null; then return 0; fi
  slurmctld -f "$conf" \
    || { tail -n 10 "$dir/slurmctld.log" >&2 2>/dev/null; die "slurmctld did not start (log: $dir/slurmctld.log)"; }
  stage "started slurmctld"
}

start_slurmd() {
  if slurmd_pid >/dev/null; then return 0; fi
  slurmd -f "$conf" -N "$node" \
    || { tail -n 10 "$dir/slurmd.log" >&2 2>/dev/null; die "slurmd did not start (log: $dir/slurmd.log)"; }
  stage "started slurmd"
}

wait_idle() {
  local i state=
  for ((i = 0; i < 600; i++)); do
    state=$(node_state)
    case $state in idle | mix | alloc) return 0 ;; esac
    if ! ctld_pid >/dev/null; then
      tail -n 10 "$dir/slurmctld.log" >&2 2>/dev/null
      die "slurmctld exited (log: $dir/slurmctld.log)"
    fi
    if ! slurmd_pid >/dev/null; then
      tail -n 10 "$dir/slurmd.log" >&2 2>/dev/null
      die "slurmd exited (log: $dir/slurmd.log)"
    fi
    sleep 0.1
  done
  die "node $node is still '${state:-unknown}' after 60 s (logs: $dir/slurmctld.log, $dir/slurmd.log)"
}

case $command in
install)
  # Only the packages (CI does this before the tests, so a test's time is
  # the cluster's and not apt's). apt.log goes in the state folder.
  mkdir -p "$dir"
  install_packages
  stage "slurm-wlm and munge are installed"
  ;;
start)
  # SlurmUser=root: the daemons run as root, jobs as whoever submits them.
  [ "$(id -u)" = 0 ] || die "start needs root (the daemons run as root here)"
  # munged wants its socket's folder, and every folder above it, searchable
  # by all (o+x), and writable by its owner alone.
  mkdir -p "$dir"
  chmod 755 "$dir"
  # A unix socket's path must fit in sun_path (108 bytes).
  [ "${#socket}" -lt 100 ] || die "state folder $dir is too long for munge's socket path $socket; use a shorter one"
  install_packages
  if ctld_pid >/dev/null && slurmd_pid >/dev/null && munged_pid >/dev/null; then
    stage "already running in $dir"
  else
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
    chmod 755 "$dir/munge"
    if ! ctld_pid >/dev/null && listening "$ctld_port"; then
      die "port $ctld_port (SlurmctldPort) is taken, another slurmctld? Stop it, or set SLURM_CTLD_PORT and SLURM_SLURMD_PORT"
    fi
    if ! slurmd_pid >/dev/null && listening "$slurmd_port"; then
      die "port $slurmd_port (SlurmdPort) is taken, another slurmd? Stop it, or set SLURM_CTLD_PORT and SLURM_SLURMD_PORT"
    fi
    write_conf
    start_munged
    # slurmctld recovers the jobs it had; when none of their slurmstepd
    # runs any more (slurmctld died, or the machine rebooted, before a stop
    # that cancels them), those it thinks are running are not, and would
    # hold the node's CPUs for good.
    ghosts=false
    if ! ctld_pid >/dev/null && [ -z "$(stepds)" ]; then ghosts=true; fi
    start_ctld
    start_slurmd
    if $ghosts; then
      for ((i = 0; i < 100; i++)); do
        scontrol ping 2>/dev/null | grep -q 'is UP' && break
        sleep 0.1
      done
      mapfile -t jobs < <(squeue -h -t RUNNING,COMPLETING,SUSPENDED,CONFIGURING -o %A 2>/dev/null)
      if [ "${#jobs[@]}" -gt 0 ]; then
        log "cancelling ${#jobs[@]} jobs recovered as running whose processes are gone: ${jobs[*]}"
        scancel "${jobs[@]}" 2>/dev/null || true
      fi
    fi
  fi
  wait_idle
  stage "node $node is $(node_state) in partition $partition"
  print_keys
  ;;
stop)
  if pid=$(ctld_pid) && [ -n "$(squeue -h -o %A 2>/dev/null | head -n1)" ]; then
    # slurmstepd and the jobs' processes outlive slurmd: end the jobs first.
    mapfile -t jobs < <(squeue -h -o %A)
    stage "cancelling ${#jobs[@]} jobs"
    scancel "${jobs[@]}" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
      [ -z "$(squeue -h -o %A 2>/dev/null | head -n1)" ] && break
      sleep 0.1
    done
  fi
  daemons=()
  if pid=$(slurmd_pid); then daemons+=("slurmd:$pid"); fi
  if pid=$(ctld_pid); then daemons+=("slurmctld:$pid"); fi
  if [ "${#daemons[@]}" -gt 0 ]; then end_processes 20 "${daemons[@]}"; fi
  # What is left of the jobs when slurmctld was not there to cancel them:
  # each slurmstepd and the job's processes under it.
  mapfile -t left < <(for pid in $(stepds); do echo "$pid"; descendants "$pid"; done)
  if [ "${#left[@]}" -gt 0 ]; then
    log "ending ${#left[@]} processes of jobs left running (slurmstepd and its children: ${left[*]})"
    kill -KILL "${left[@]}" 2>/dev/null || true
  fi
  # munged last: slurmd and slurmctld sign their last messages with it.
  if pid=$(munged_pid); then end_processes 10 "munged:$pid"; fi
  stage "stopped (state kept in $dir)"
  ;;
status)
  up=true
  for daemon in munged slurmctld slurmd; do
    case $daemon in
      munged) pid=$(munged_pid) || pid= ;;
      slurmctld) pid=$(ctld_pid) || pid= ;;
      slurmd) pid=$(slurmd_pid) || pid= ;;
    esac
    if [ -n "$pid" ]; then echo "$daemon=running pid $pid"; else echo "$daemon=stopped"; up=false; fi
  done
  echo "node-state=$(node_state)"
  $up
  ;;
esac
