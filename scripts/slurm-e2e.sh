#!/usr/bin/env bash
# slurm-e2e.sh CORPUS_DIR — the Slurm example of docs/batch.md, end to end,
# on a real single-node Slurm (Debian slurm-wlm + munge):
#
#   1. installs slurmctld, slurmd, slurm-client and munge with apt when
#      sbatch is missing (root only), writes a one-node slurm.conf into a
#      scratch folder and starts munged, slurmctld and slurmd;
#   2. runs `sbatch --array=0-3` where each task runs
#      `tracedx batch CORPUS --out OUT --shard $SLURM_ARRAY_TASK_ID/4`;
#   3. runs the same batch on one machine, and the Kubernetes manifest's
#      arithmetic (--shard $JOB_COMPLETION_INDEX/16 for every index);
#   4. checks with DuckDB that each union of shard datasets equals the
#      single-machine dataset row for row (scripts/duckdb-union.mjs).
#
# Without apt (or not root) it skips with a message; under CI=true a skip
# is a failure. .ci/run calls it with ../shared/corpus.
set -euo pipefail
corpus=${1:?usage: slurm-e2e.sh CORPUS_DIR}
repo=${TRACEDX_REPO:-$(cd "$(dirname "$0")/.." && pwd)}

skip() {
  echo "slurm-e2e: skipped: $*"
  if [ "${CI:-}" = true ]; then exit 1; fi
  exit 0
}
[ -d "$corpus" ] || skip "no corpus at $corpus"

if ! command -v sbatch >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || skip "sbatch is missing and installing it needs root"
  command -v apt-get >/dev/null 2>&1 || skip "sbatch is missing and apt-get is not available"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    slurmctld slurmd slurm-client munge >/dev/null || skip "apt-get could not install slurm-wlm"
fi

work=$(mktemp -d /tmp/tracedx-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${munge_pid:-}" ] && kill "$munge_pid" 2>/dev/null || true
}
trap cleanup EXIT

# munge: a key of our own, its own socket, run in the foreground.
mkdir -p "$work/munge"
chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
sock="$work/munge/munge.socket"
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$sock" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" \
  >"$work/munge/munged.out" 2>&1 &
munge_pid=$!
sleep 1

host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$work/spool/ctld" "$work/spool/d" "$work/log"
cat >"$work/slurm.conf" <<CONF
ClusterName=tracedx-e2e
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$work/spool/ctld
SlurmdSpoolDir=$work/spool/d
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 30); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE 'idle|mixed'; then break; fi
  sleep 1
done
sinfo -h -o '%T' | grep -qE 'idle|mixed' || { tail -20 "$work"/log/*; echo "slurm-e2e: the node did not come up"; exit 1; }

tracedx=$work/tracedx
(cd "$repo" && go build -o "$tracedx" ./cmd/tracedx)

# 2. The Slurm array of docs/batch.md, with n = 4.
cat >"$work/array.sh" <<JOB
#!/bin/bash
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$work/log/array-%A_%a.log
N=\${SLURM_ARRAY_TASK_COUNT:-4}
exec "$tracedx" batch "$corpus" --out "$work/slurm-out" --jobs 1 --quiet \\
  --shard "\${SLURM_ARRAY_TASK_ID}/\${N}"
JOB
# Exit 1 (a gate failed) and 2 (unreadable inputs: the corpus holds some)
# are results, not failures of the run: compare the datasets instead.
sbatch --wait --parsable "$work/array.sh" >"$work/jobid" || true
jobid=$(cat "$work/jobid")
echo "slurm-e2e: array job $jobid done"
ls "$work/slurm-out/dataset" | head -40

# 3. One machine, and the Kubernetes manifest's 16 indexes.
"$tracedx" batch "$corpus" --out "$work/single" --quiet >/dev/null || true
for i in $(seq 0 15); do
  "$tracedx" batch "$corpus" --out "$work/k8s-out" --quiet --shard "$i/16" >/dev/null || true
done

# 4. Row for row, with DuckDB.
node "$repo/scripts/duckdb-union.mjs" "$work/single/dataset" "$work/slurm-out/dataset"
node "$repo/scripts/duckdb-union.mjs" "$work/single/dataset" "$work/k8s-out/dataset"
echo "slurm-e2e: ok"
[ -n "${KEEP:-}" ] || rm -rf "$work"   # KEEP=1 keeps the outputs and Slurm logs
