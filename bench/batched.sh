#!/usr/bin/env bash
# Batched solves on the GPU (solvers/batch/batch_cuda.cu), every synchronisation mode and
# schedule side by side, with the barrier costs of the same GPU measured in the
# same call (bench/batched.cu: grid.sync(), the row barrier at 1 .. 64 rows,
# cluster.sync() at 2 .. 16 blocks).
#   bench/batched.sh BUILD_DIR OUT_DIR [quick|full|uniform|ragged|targets]
# uniform: B problems of one size (side^2 rows, 2D), shifts uniform on
#   [0, 1000] so the problems converge unevenly (a larger shift converges
#   faster); every sync mode (row, cluster, block, grid, launch, launch_each,
#   auto) with the atomic schedule: problems per second of kernel time (the
#   device's time from the first solve kernel to the end of the last,
#   /batch kernel_time; solve s, with allocations and copies, beside it). full: B = 1, 16, 256, 4096 at sides
#   32, 64, 128, 256 (rows B x side^2 at most 2^24: larger ones are listed as
#   left out); quick: B = 16, 256 at sides 32 and 128. uniform and ragged:
#   full's two parts alone (each fits a 10-minute call: ragged's 1000
#   problems of up to 1024^2 points are about 10^8 rows, 10-15 s to build);
#   targets: full's uniform rows of B >= 256, the issue's targets.
# ragged: B = 1000 problems, sides log-uniform (full: 16 .. 1024, the issue's
#   16^2 .. 1024^2 points; quick: 4 .. 32, i.e. 16 .. 1024 rows),
#   static against atomic (and clc where the GPU has it) in block, cluster and
#   row groups (split by levels: solvers/batch/batch_levels.c): solve and kernel
#   time, the load imbalance (busiest block's time over the mean, from /batch
#   busy_max and busy_mean) and kernel time over the mean block's busy time
#   (1.0: the work spread evenly).
# Each run: CG (BATCHED_METHOD=jacobi for Jacobi), rtol 1e-6, no solution
# written. A failing run becomes a "skipped: MESSAGE" row. BATCHED_TIMEOUT
# (s, default 120) bounds one run; BATCHED_DRY_RUN=1 lists the rows only;
# BATCHED_BARRIERS=0 leaves the barrier table out; BATCHED_RAGGED_SCHEDULES
# (default "static atomic clc") and BATCHED_RAGGED_SYNCS (default "row block
# cluster") the ragged rows' schedules and groups (full, ragged);
# BATCHED_BUDGET (s, default 0: none) leaves out, as skipped rows, the runs
# that could end past it (elapsed + BATCHED_TIMEOUT), so the table is written
# within a device call's limit.
# Table to stdout and OUT_DIR/table.md; runs in OUT_DIR/runs/.
set -uo pipefail
# shellcheck source=bench/run_status.sh
. "$(dirname "$0")/run_status.sh"
usage="usage: bench/batched.sh BUILD_DIR OUT_DIR [quick|full|uniform|ragged|targets]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
build_arg=$1 out_arg=$2 sel=${3:-quick}
src=$(cd "$(dirname "$0")/.." && pwd)
tmo=${BATCHED_TIMEOUT:-120}
method=${BATCHED_METHOD:-cg}
dry=${BATCHED_DRY_RUN:-0}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
max_rows=$((1 << 24))

# ---- the rows: "kind B side sync schedule"
plan=()
uniform() { # Bs sides
  local b s m
  for b in $1; do for s in $2; do for m in row cluster block grid launch launch_each auto; do
    plan+=("uniform $b $s $m atomic")
  done; done; done
}
ragged() { # sides schedules
  local m c
  for m in ${BATCHED_RAGGED_SYNCS:-row block cluster}; do for c in $2; do plan+=("ragged 1000 $1 $m $c"); done; done
}
rsched=${BATCHED_RAGGED_SCHEDULES:-static atomic clc}
case $sel in
  quick) uniform "16 256" "32 128"; ragged 4:32 "static atomic clc" ;;
  full) uniform "1 16 256 4096" "32 64 128 256"; ragged 16:1024 "$rsched" ;;
  uniform) uniform "1 16 256 4096" "32 64 128 256" ;;
  ragged) ragged 16:1024 "$rsched" ;;
  targets) uniform "256 4096" "32 64 128 256" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
if [ "$dry" = 1 ]; then printf '%s\n' "${plan[@]}"; echo "${#plan[@]} rows" >&2; exit 0; fi

build=$(cd "$build_arg" && pwd) || { echo "$usage" >&2; exit 2; }
mkdir -p "$out_arg/runs" && out=$(cd "$out_arg" && pwd) || exit 2
[ -x "$build/coopsolve" ] || { echo "batched.sh: no $build/coopsolve" >&2; exit 1; }
py=python3
$py -c 'import h5py, numpy' 2>/dev/null || py=/usr/bin/python3
$py -c 'import h5py, numpy' || { echo "batched.sh: no python3 with h5py" >&2; exit 1; }

# ---- barrier costs of this GPU
barriers=$out/barriers.md
if [ "${BATCHED_BARRIERS:-1}" = 0 ]; then
  echo "(barrier table left out: BATCHED_BARRIERS=0)" >"$barriers"
elif nvcc -O2 -std=c++17 -arch=native -o "$out/batched" "$src/bench/batched.cu" >"$out/batched-build.log" 2>&1; then
  "$out/batched" 0 >"$barriers" 2>"$out/batched.err" || echo "(barrier bench failed: $(tail -1 "$out/batched.err"))" >>"$barriers"
else
  echo "(bench/batched.cu did not compile: see batched-build.log)" >"$barriers"
fi
cat "$barriers" >&2

# ---- the runs
tsv=$out/runs.tsv
printf 'name\tkind\tB\tside\tsync\tschedule\tstatus\th5\tmessage\n' >"$tsv"
k=0
budget=${BATCHED_BUDGET:-0} started=$(date +%s)
for r in "${plan[@]}"; do
  # shellcheck disable=SC2086
  set -- $r
  kind=$1 b=$2 side=$3 sync=$4 sched=$5
  k=$((k + 1))
  name=$kind-$b-${side/:/-}-$sync-$sched
  h5=$out/runs/$name.h5 log=$out/runs/$name.log
  if [ "$kind" = uniform ] && [ $((b * side * side)) -gt $max_rows ]; then
    printf '%s\t%s\t%s\t%s\t%s\t%s\tskipped\t-\tleft out: %d rows > 2^24\n' "$name" "$kind" "$b" "$side" "$sync" \
      "$sched" $((b * side * side)) >>"$tsv"
    continue
  fi
  if [ "$budget" -gt 0 ] && [ $(($(date +%s) - started + tmo)) -gt "$budget" ]; then
    printf '%s\t%s\t%s\t%s\t%s\t%s\tskipped\t-\tleft out: BATCHED_BUDGET %s s\n' "$name" "$kind" "$b" "$side" "$sync" \
      "$sched" "$budget" >>"$tsv"
    continue
  fi
  if [ "$kind" = uniform ]; then sizes="uniform:$side" shift="uniform:0:1000"
  else sizes="loguniform:$side" shift="uniform:0:100"; fi
  printf '[%d/%d] %s ' "$k" "${#plan[@]}" "$name" >&2
  rm -f "$h5"
  t0=$(date +%s.%N)
  timeout -k 10 "$tmo" mpirun --bind-to none -np 1 "$build/coopsolve" "$src/inputs/batch.ini" --backend cuda \
    --set batch.count="$b" --set batch.sizes="$sizes" --set batch.shift="$shift" --set batch.rhs=random \
    --set batch.seed=1 --set solver.name="$method" --set solver.pc=none --set solver.rtol=1e-6 \
    --set solver.max_iter=100000 --set batch.sync="$sync" --set batch.schedule="$sched" \
    --set output.fields=false --set output.monitor_every=0 --output "$h5" </dev/null >"$log" 2>&1
  rc=$?
  wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  run_status $rc "$log" "$h5" "$tmo"
  echo "$status, $wall s" >&2
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$b" "$side" "$sync" "$sched" "$status" "$h5" \
    "$msg" >>"$tsv"
done

# ---- the table
"$py" - "$tsv" "$barriers" "$method" >"$out/table.md" <<'PYEOF'
import csv, sys
import h5py

tsv, barriers, method = sys.argv[1:4]


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def load(r):
    with h5py.File(r["h5"], "r") as f:
        b, s = f["batch"].attrs, f["solver"].attrs
        it = f["batch/iterations"][:]
        nrows = f["batch/rows"][:]
        kt = float(b["kernel_time"]) if "kernel_time" in b else 0.0
        return dict(t=float(s["solve_time"]), kt=kt, tk=kt if kt > 0 else float(s["solve_time"]), sync=text(b["sync_used"]), sched=text(b["schedule_used"]),
                    bpg=int(b["group_blocks_used"]), groups=int(b["groups"]), barriers=int(b["barriers"]),
                    bmax=float(b["busy_max"]), bmean=float(b["busy_mean"]), itmin=int(it.min()),
                    levels=int(b["levels_used"]) if "levels_used" in b else 1,
                    rowits=float((it.astype(float) * nrows.astype(float)).sum()),
                    itmax=int(it.max()), count=int(b["count"]), rows=int(b["rows"]))


def kcell(f):  # an output from before /batch kernel_time: '-', and rates by solve time
    return f"{f['kt']:.4f}" if f["kt"] > 0 else "- (solve s used)"


def rate(f):
    return f"{f['count'] / f['tk']:.1f}" if f["tk"] > 0 else "-"


rows = list(csv.DictReader(open(tsv), delimiter="\t", quoting=csv.QUOTE_NONE))
figs = {}
for r in rows:
    if r["status"] == "ok":
        try:
            figs[r["name"]] = load(r)
        except Exception as e:
            r["status"], r["message"] = "skipped", f"{type(e).__name__}: {e}"

print(open(barriers).read().rstrip())
print()
print(f"## Uniform sizes, uneven convergence ({method}, rtol 1e-6, shifts 0 .. 1000)\n")
print("| B | side | rows | sync | schedule | blocks/group | groups | iterations | solve s | kernel s | "
      "problems/s | group barriers | vs best |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
best = {}
for r in rows:
    f = figs.get(r["name"])
    if r["kind"] == "uniform" and f:
        key = (r["B"], r["side"])
        best[key] = min(best.get(key, 1e300), f["tk"] if f["tk"] > 0 else 1e300)
for r in rows:
    if r["kind"] != "uniform":
        continue
    f = figs.get(r["name"])
    lead = f"| {r['B']} | {r['side']} | {int(r['B']) * int(r['side']) ** 2} | {r['sync']} | "
    if not f:
        print(lead + f"{r['schedule']} | {r['status']}: {r['message']} | | | | | | | |")
        continue
    sync = f["sync"] if f["sync"] == r["sync"] else f"{r['sync']} -> {f['sync']}"
    vs = f["tk"] / best[(r["B"], r["side"])] if f["tk"] > 0 else float("nan")
    print(lead.replace(f"| {r['sync']} | ", f"| {sync} | ") +
          f"{f['sched']} | {f['bpg']} | {f['groups']} | {f['itmin']} .. {f['itmax']} | {f['t']:.4f} | "
          f"{kcell(f)} | {rate(f)} | {f['barriers']} | {vs:.2f}x |")

sides = sorted({r["side"] for r in rows if r["kind"] == "ragged"})
print(f"\n## Ragged sizes: 1000 problems, sides log-uniform {', '.join(sides)} ({method}, rtol 1e-6)\n")
# DRAM floor of a CG run (pc none, 5-point rows): per row and iteration the
# matrix (8 + 5 x 12 B), the direction pass (z, p in; pn, q out) and the update
# (x, pn, r, q in; x, r out): 148 B, over the copy bandwidth (BATCHED_COPY_GBS,
# default the H200's measured 4300 GB/s), as if no byte stayed in L2
copy_gbs = float(__import__("os").environ.get("BATCHED_COPY_GBS", "4300"))
def floor(f):
    return f"{f['rowits'] * 148 / (copy_gbs * 1e9):.3f}" if method == "cg" else "-"
print("| sync | schedule | blocks/group | levels | groups | solve s | kernel s | problems/s | busiest block s | "
      "mean block s | imbalance | kernel / mean | DRAM floor s |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    if r["kind"] != "ragged":
        continue
    f = figs.get(r["name"])
    if not f:
        print(f"| {r['sync']} | {r['schedule']} | {r['status']}: {r['message']} | | | | | | | | | | |")
        continue
    imb = f["bmax"] / f["bmean"] if f["bmean"] > 0 else float("nan")
    even = f["kt"] / f["bmean"] if f["bmean"] > 0 and f["kt"] > 0 else float("nan")
    print(f"| {f['sync']} | {f['sched']} | {f['bpg']} | {f['levels']} | {f['groups']} | {f['t']:.4f} | {kcell(f)} | "
          f"{rate(f)} | {f['bmax']:.4f} | {f['bmean']:.4f} | {imb:.2f} | {even:.2f} | {floor(f)} |")
print("\nsolve s: /solver solve_time (the slowest rank's solve, allocations, uploads and downloads "
      "included); kernel s: /batch kernel_time (first solve kernel to the end of the last, device "
      "events); problems/s and vs best: by kernel s; busiest/mean block: seconds each block spent "
      "inside its problems (device clock); kernel / mean: kernel s over the mean block's busy time "
      "(1.00 = the total work spread evenly over the blocks); levels: row groups that split for a "
      "ragged batch (solvers/batch/batch_levels.c), top groups of blocks/group blocks; DRAM floor: "
      "iterations x rows x 148 B (CG's bytes a row and step) over the copy bandwidth, as if nothing "
      "stayed in L2.")
PYEOF
cat "$out/table.md"
