#!/bin/sh
# Batch runs on the GPU (solvers/batch/batch_cuda.cu) against the host backend: every
# sync mode (row, cluster, block, grid, launch, launch_each, auto) with the static and
# atomic schedules, for jacobi, cg and cg + jacobi pc on generated 2D and 3D
# batches of uneven sizes and shifts, gives every problem the host's
# iterations and reason and its solution to 1e-12 (relative, per problem), at
# 1 rank and (one problem set) 2 ranks, which may share one GPU. Heat batches
# (solver.name = heat: the Jacobi path with c_i = dt_i alpha and a step count)
# the same way, every mode and schedule at 1 and 2 ranks, uneven sizes
# (loguniform) with solver.t_end and 3D with solver.max_iter steps: the host's
# steps, reason and field to 1e-12 (relative, per problem), the same dt and
# t_final, residuals to 1e-12. Also:
#   - batches of more groups than the GPU holds at once (groups loop);
#   - ragged batches in row groups that split level by level (auto top and
#     8 blocks, static and atomic, 1 and 2 ranks, auto picking rows);
#   - batch.schedule = clc: on a GPU below cc 10.0 an input error (status 2)
#     naming the compute capability; at 10.0 and above it runs block and
#     cluster like the others, and with batch.sync = row it is refused;
#   - the row barrier itself (bench/batched.cu --selftest, where nvcc is
#     found): counters reused across launches, and a barrier that one block
#     never reaches gives up, names the group and the arrivals, and lets
#     every block leave.
# The barrier's and the schedulers' bookkeeping (bench/batched.cu --host) is
# checked in any CUDA build where nvcc is found, GPU or not; the rest skips
# where no GPU is.
. "$COOP_SRCDIR/tests/common.sh"
coop_tmpdir
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
have_bench=0
if "$COOPSOLVE" --version | grep -q '^CUDA: yes' && [ -x "$NVCC" ]; then
  # machine code for cc 9.0 and 10.0, PTX for later GPUs
  "$NVCC" -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100 \
    -gencode arch=compute_100,code=compute_100 -o "$TMP/batched" "$COOP_SRCDIR/bench/batched.cu" \
    >"$TMP/nvcc.log" 2>&1 || { cat "$TMP/nvcc.log"; fail "bench/batched.cu does not compile"; }
  "$TMP/batched" --host || fail "barrier and scheduler bookkeeping"
  have_bench=1
fi
coop_require_gpu
coop_python

# ini NAME LINES: write $TMP/NAME.ini, '|' between lines.
ini() { printf '%s\n' "$2" | tr '|' '\n' >"$TMP/$1.ini"; }

# run RANKS NAME BACKEND INI [ARG...]: $TMP/NAME.h5, or fail.
# (its own variable names: compare() keeps name and n across calls)
run() {
  run_n=$1 run_name=$2 run_be=$3 run_file=$4
  shift 4
  (cd "$TMP" && coop_mpirun "$run_n" "$COOPSOLVE" --backend "$run_be" "$run_file" --output "$run_name.h5" \
    --set output.monitor_every=0 "$@" >"$TMP/$run_name.out" 2>"$TMP/$run_name.err" </dev/null) && return 0
  run_rc=$?
  cat "$TMP/$run_name.out" "$TMP/$run_name.err"
  fail "$run_name: exit status $run_rc"
}

cat >"$TMP/cmp.py" <<'EOF'
import sys, h5py, numpy as np
host, dev, want = sys.argv[1], sys.argv[2], sys.argv[3:]

def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)

a, b = h5py.File(host, "r")["batch"], h5py.File(dev, "r")["batch"]
bad = []
for name in ("offsets", "rows"):
    if not np.array_equal(a[name][:], b[name][:]): bad.append(f"{name} differ")
it_a, it_b = a["iterations"][:], b["iterations"][:]
ra, rb = a["reason"][:], b["reason"][:]
if np.any(it_b < 0) or np.any(rb <= 0): bad.append("a problem was never written (poisoned result left)")
d = np.nonzero((it_a != it_b) | (ra != rb))[0]
if len(d): bad.append(f"{len(d)} problems differ in iterations or reason, first {d[0]}: "
                     f"host {it_a[d[0]]} ({ra[d[0]]}), gpu {it_b[d[0]]} ({rb[d[0]]})")
off, xa, xb = a["offsets"][:], a["solution"][:], b["solution"][:]
worst = 0.0
for i in range(len(off) - 1):
    x, y = xa[off[i]:off[i + 1]], xb[off[i]:off[i + 1]]
    if len(x):
        worst = max(worst, np.abs(x - y).max() / max(np.abs(x).max(), 1e-300))
if not worst <= 1e-12: bad.append(f"solutions differ by {worst:.3g} (relative, worst problem)")
if "dt" in a:  # heat: the same steps and times; the final norms up to their summation order
    for name in ("dt", "t_final"):
        if name not in b or not np.array_equal(a[name][:], b[name][:]): bad.append(f"heat: {name} differ")
    res_a, res_b = a["residual"][:], b["residual"][:]
    if not np.all(np.abs(res_a - res_b) <= 1e-12 * np.abs(res_a)): bad.append("heat: final residuals differ")
# the kernels' device time: measured, and inside the solve's wall time
kt, st = float(b.attrs.get("kernel_time", -1.0)), float(h5py.File(dev, "r")["solver"].attrs["solve_time"])
if not 0.0 < kt <= st: bad.append(f"kernel_time {kt} not in (0, solve_time {st}]")
for kv in want:  # attribute=value: what ran
    k, v = kv.split("=")
    got = text(b.attrs[k])
    if got not in v.split(","): bad.append(f"{k} is {got}, not {v}")
if bad:
    print(dev + ": " + "; ".join(bad))
    sys.exit(1)
print(f"{dev}: ok ({len(off) - 1} problems, {int(it_b.sum())} iterations, worst {worst:.2g}, "
      f"{text(b.attrs['sync_used'])}/{text(b.attrs['schedule_used'])} x {int(b.attrs['group_blocks_used'])} "
      f"blocks, {int(b.attrs['groups'])} groups)")
EOF
cmp() { "$PY" "$TMP/cmp.py" "$@" || fail "$2 against $1"; }

# blocks per group asked for: several, and odd, so the row and grid barriers
# and the cluster's DSMEM sums span blocks even on small problems
gb() {
  case $1 in
    row | grid) echo 3 ;;
    cluster) echo 4 ;;
    *) echo 0 ;;
  esac
}

# compare NAME RANKS CONFIGS...: CONFIGS are sync/schedule pairs.
compare() {
  name=$1 n=$2
  shift 2
  coop_gpu_case "$name-$n" || return 0
  [ -f "$TMP/$name-host.h5" ] || run 1 "$name-host" host "$name.ini"
  for c in "$@"; do
    sync=${c%/*} sched=${c#*/}
    r=$name-$sync-$sched-$n
    run "$n" "$r" cuda "$name.ini" --set batch.sync="$sync" --set batch.schedule="$sched" \
      --set tune.group_blocks="$(gb "$sync")"
    case $sync in
      auto) cmp "$TMP/$name-host.h5" "$TMP/$r.h5" sync_used=block,cluster,row ;;
      launch | launch_each) cmp "$TMP/$name-host.h5" "$TMP/$r.h5" sync_used="$sync" ;;
      *) cmp "$TMP/$name-host.h5" "$TMP/$r.h5" sync_used="$sync" schedule_used="$sched" \
        group_blocks_used="$(gb "$sync" | sed 's/^0$/1/')" ;;
    esac
  done
  coop_gpu_done "$name-$n"
}

QUICK="rag c2-1 p2-2 j3-1 h2-1 many-1 clc"
ALL="row/static row/atomic cluster/static cluster/atomic block/static block/atomic grid/static grid/atomic launch/static launch_each/static auto/auto"

ini j2 '[batch]|count = 40|sizes = loguniform:3:40|shift = loguniform:0.1:1000|rhs = random|seed = 5|[solver]|name = jacobi|rtol = 1e-8|max_iter = 100000'
ini c2 '[batch]|count = 40|sizes = loguniform:3:48|shift = loguniform:0.01:1000|rhs = ones|seed = 9|[solver]|name = cg|rtol = 1e-10'
ini p2 '[batch]|count = 40|sizes = loguniform:3:48|shift = uniform:0:500|rhs = random|seed = 2|[solver]|name = cg|pc = jacobi|rtol = 1e-10'
ini j3 '[batch]|count = 24|dim = 3|sizes = uniform:2:12|shift = uniform:0:300|rhs = random|seed = 7|[solver]|name = jacobi|rtol = 1e-8|max_iter = 100000'
ini c3 '[batch]|count = 24|dim = 3|sizes = uniform:2:14|shift = loguniform:0.1:100|rhs = ones|seed = 4|[solver]|name = cg|rtol = 1e-10'
ini p3 '[batch]|count = 24|dim = 3|sizes = uniform:2:14|shift = uniform:0:50|rhs = random|seed = 3|[solver]|name = cg|pc = jacobi|rtol = 1e-10'
# a few large problems: auto gives each many blocks (rows of 8 and more)
ini big '[batch]|count = 5|sizes = uniform:96:128|shift = uniform:0:10|rhs = random|seed = 11|[solver]|name = cg|pc = jacobi|rtol = 1e-9'

# ---- ragged batches: row groups split level by level (solvers/batch/batch_levels.c) ----
# j2, c2, p2 and h2 are ragged too (their row runs split 3 blocks into 1);
# here deeper: an auto top (many levels) and 8 (8, 4, 2, 1), both schedules,
# and 2 ranks; levels_used says the split ran.
ini rag '[batch]|count = 60|sizes = loguniform:4:220|shift = loguniform:0.01:100|rhs = random|seed = 21|[solver]|name = cg|pc = jacobi|rtol = 1e-10'
levels_at_least() { # H5 N
  "$PY" -c "import h5py,sys; sys.exit(0 if h5py.File(sys.argv[1])['batch'].attrs['levels_used'] >= int(sys.argv[2]) else 1)" \
    "$1" "$2" || fail "$1: fewer than $2 levels"
}
if coop_gpu_case rag; then
run 1 rag-host host rag.ini
for sched in static atomic; do
  for top in 0 8; do
    run 1 "rag-$sched-$top" cuda rag.ini --set batch.sync=row --set batch.schedule=$sched --set tune.group_blocks=$top
    cmp "$TMP/rag-host.h5" "$TMP/rag-$sched-$top.h5" sync_used=row schedule_used=$sched
    levels_at_least "$TMP/rag-$sched-$top.h5" 4
  done
done
run 2 rag-atomic-2r cuda rag.ini --set batch.sync=row --set batch.schedule=atomic
cmp "$TMP/rag-host.h5" "$TMP/rag-atomic-2r.h5" sync_used=row schedule_used=atomic
run 1 rag-auto cuda rag.ini
cmp "$TMP/rag-host.h5" "$TMP/rag-auto.h5" sync_used=row
levels_at_least "$TMP/rag-auto.h5" 4
coop_gpu_done rag
fi

for case in j2 c2 p2 j3 c3 p3; do
  # shellcheck disable=SC2086
  compare $case 1 $ALL
done
# shellcheck disable=SC2086
compare p2 2 $ALL
compare j3 2 row/atomic cluster/static block/atomic grid/static launch/static launch_each/static
compare big 1 auto/auto launch/static
[ ! -e "$TMP/big-host.h5" ] || {
run 1 big-row-auto cuda big.ini --set batch.sync=row --set batch.schedule=atomic
cmp "$TMP/big-host.h5" "$TMP/big-row-auto.h5" sync_used=row
"$PY" -c "import h5py,sys; sys.exit(0 if h5py.File(sys.argv[1])['batch'].attrs['group_blocks_used'] >= 8 else 1)" \
  "$TMP/big-row-auto.h5" || fail "big problems on rows: fewer than 8 blocks per row chosen"
}

# ---- heat batches ----
ini h2 '[batch]|count = 40|sizes = loguniform:3:48|shift = loguniform:0.1:1000|rhs = random|seed = 5|[solver]|name = heat|t_end = 0.02'
ini h3 '[batch]|count = 24|dim = 3|sizes = uniform:2:14|shift = uniform:0:50|rhs = zero|seed = 7|[solver]|name = heat|alpha = 0.7|max_iter = 120'
ini hbig '[batch]|count = 5|sizes = uniform:96:128|shift = uniform:0:10|rhs = random|seed = 11|[solver]|name = heat|t_end = 0.001'
# shellcheck disable=SC2086
compare h2 1 $ALL
# shellcheck disable=SC2086
compare h2 2 $ALL
# shellcheck disable=SC2086
compare h3 1 $ALL
compare h3 2 row/atomic cluster/static block/atomic grid/static launch/static
compare hbig 1 auto/auto launch/static row/atomic
[ ! -e "$TMP/h2-host.h5" ] ||
"$PY" -c "import h5py,sys; it=h5py.File(sys.argv[1])['batch/iterations'][:]; sys.exit(0 if it.min() < it.max() else 1)" \
  "$TMP/h2-host.h5" || fail "h2: every problem took the same steps (t_end should make them differ)"

# ---- more groups than the GPU holds at once: the groups loop over problems ----
ini many '[batch]|count = 3000|sizes = loguniform:2:12|shift = uniform:0:100|rhs = random|seed = 13|[solver]|name = jacobi|rtol = 1e-8|max_iter = 100000'
compare many 1 block/static block/atomic row/atomic row/static grid/static cluster/atomic
ini hmany '[batch]|count = 3000|sizes = loguniform:2:12|shift = uniform:0:100|rhs = random|seed = 13|[solver]|name = heat|t_end = 0.01'
compare hmany 1 block/static block/atomic row/atomic grid/static cluster/atomic launch/static launch_each/static
for f in "$TMP"/many-*-1.h5; do
  [ -e "$f" ] || continue
  "$PY" -c "import h5py,sys; b=h5py.File(sys.argv[1])['batch']; sys.exit(0 if b.attrs['groups'] < b.attrs['count'] else 1)" \
    "$f" || fail "$f: not fewer groups than problems"
done

# ---- cluster launch control ----
if coop_gpu_case clc; then
(cd "$TMP" && coop_mpirun 1 "$COOPSOLVE" --backend cuda p2.ini --output clc.h5 --set batch.schedule=clc \
  --set batch.sync=block >"$TMP/clc.out" 2>"$TMP/clc.err" </dev/null)
rc=$?
if [ $rc -eq 2 ]; then
  grep -Eq '^coopsolve: .*(run|batch)\.schedule = clc needs compute capability 10\.0; GPU [0-9]* has [0-9]\.[0-9]' "$TMP/clc.err" ||
    { cat "$TMP/clc.err"; fail "clc below cc 10.0: message"; }
  [ "$(grep -c '^coopsolve:' "$TMP/clc.err")" = 1 ] || { cat "$TMP/clc.err"; fail "clc: not one message"; }
  [ ! -e "$TMP/clc.h5" ] || fail "clc refused but an output file was written"
  echo "clc: refused below cc 10.0, as it must be"
elif [ $rc -eq 0 ]; then
  compare p2 1 block/clc cluster/clc
  compare j2 1 block/clc cluster/clc
  compare many 1 block/clc cluster/clc
  compare h2 1 block/clc cluster/clc
  (cd "$TMP" && coop_mpirun 1 "$COOPSOLVE" --backend cuda p2.ini --output clcrow.h5 --set batch.schedule=clc \
    --set batch.sync=row >"$TMP/clcrow.out" 2>"$TMP/clcrow.err" </dev/null)
  [ $? -eq 2 ] || { cat "$TMP/clcrow.err"; fail "clc with row groups: not an input error"; }
else
  cat "$TMP/clc.out" "$TMP/clc.err"
  fail "batch.schedule = clc: exit status $rc (0 or 2 expected)"
fi
coop_gpu_done clc
fi

# ---- the row barrier itself ----
if [ $have_bench = 1 ]; then
  "$TMP/batched" --selftest || fail "row barrier self-test"
else
  echo "no nvcc: the row barrier self-test (bench/batched.cu --selftest) is left out"
fi
exit 0
