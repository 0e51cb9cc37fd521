#!/usr/bin/env bash
# Usage: scripts/cpu-time.sh <command> [args...]
#
# Runs the command in a control group of its own and prints, after it, the CPU time of every
# process it started (user and system seconds), the wall time and the load average before and
# after. `/usr/bin/time` cannot do this for sandboxed work: it adds up only the children that were
# waited for, all the way up; a verifier in a bubblewrap PID namespace is a child of the
# namespace's init, which is killed when the sandbox ends (strace: `killed by SIGKILL`), so the
# verifier's time reaches no one. For the quickstart evaluation `/usr/bin/time` said 32 s where
# the control group counted 140 s (docs/testing.md).
#
# Needs root (it makes a control group); works with cgroup v2 (cpu.stat) and v1 (cpuacct).
# Exits with the command's exit code.
set -uo pipefail

if [ $# -eq 0 ]; then
  echo "usage: scripts/cpu-time.sh <command> [args...]" >&2
  exit 2
fi

name="skillsmith-cpu-time-$$"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  group="/sys/fs/cgroup/$name"
else
  group="/sys/fs/cgroup/cpuacct/$name"
fi
if ! mkdir "$group" 2>/dev/null; then
  echo "cpu-time: cannot make the control group $group (run as root)" >&2
  exit 2
fi

load_before=$(cut -d' ' -f1 /proc/loadavg)
start=$(date +%s.%N)
# The command runs in a child shell that joins the group first, so every process it starts is
# counted, reaped or not.
bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' cpu-time "$group" "$@"
status=$?
end=$(date +%s.%N)
load_after=$(cut -d' ' -f1 /proc/loadavg)

if [ -f "$group/cpu.stat" ]; then
  read -r user system < <(awk '$1=="user_usec"{u=$2} $1=="system_usec"{s=$2} END{printf "%.1f %.1f", u/1e6, s/1e6}' "$group/cpu.stat")
else
  ticks=$(getconf CLK_TCK)
  read -r user system < <(awk -v t="$ticks" '$1=="user"{u=$2} $1=="system"{s=$2} END{printf "%.1f %.1f", u/t, s/t}' "$group/cpuacct.stat")
fi
# Leftover processes (a daemon the command started) would keep the group; say so, do not kill.
if ! rmdir "$group" 2>/dev/null; then
  echo "cpu-time: processes outlived the command and still run in $group" >&2
fi
awk -v u="$user" -v s="$system" -v w="$(echo "$end - $start" | bc)" -v l0="$load_before" -v l1="$load_after" \
  'BEGIN{printf "cpu-time: %.1f s CPU (%.1f user + %.1f system), %.1f s wall, load %s -> %s\n", u+s, u, s, w, l0, l1}' >&2
exit $status
