#!/usr/bin/env bash
# CG per-iteration time of coopsolve (grid and launch modes) side by side with
# the vendor-library baselines of bench/krylov_vendor.cu (cuSPARSE + cuBLAS,
# per-call and CUDA graph), against a bytes-moved floor from the measured
# device copy bandwidth.
#   bench/krylov.sh BUILD_DIR SRC_DIR OUT_DIR
# BUILD_DIR holds coopsolve, SRC_DIR is the source tree (bench/, tests/data/),
# OUT_DIR receives the inputs, logs and krylov.md. The table goes to stdout and
# to OUT_DIR/krylov.md; a failing run gets `fail` in its cell and its last
# lines on stderr. Environment: ITERS (default 200) CG iterations per run,
# RUN_TIMEOUT (default 900) seconds allowed for any one run.
set -euo pipefail

usage="usage: krylov.sh BUILD_DIR SRC_DIR OUT_DIR"
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
cmdline="bench/krylov.sh $(printf '%q ' "$@")"
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
iters=${ITERS:-200}
run_timeout=${RUN_TIMEOUT:-900}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

md="$out/krylov.md"
: >"$md"
emit() { printf '%s\n' "$*" | tee -a "$md"; }

# run LOG CMD...: run CMD with output to LOG; on failure print the command and
# the log's last lines to stderr. Returns the command's status.
run() {
  local log=$1 rc=0
  shift
  if command -v timeout >/dev/null 2>&1; then
    timeout "$run_timeout" "$@" >"$log" 2>&1 || rc=$?
  else
    "$@" >"$log" 2>&1 || rc=$?
  fi
  if [ "$rc" -ne 0 ]; then
    {
      echo "krylov.sh: FAILED (exit $rc): $*"
      tail -n 20 "$log" | sed 's/^/    /'
    } >&2
  fi
  return "$rc"
}

# kv FILE KEY: value of KEY=... on the last line of FILE that has it.
kv() { grep -oE "(^|[[:space:]])$2=[^[:space:]]+" "$1" 2>/dev/null | tail -n 1 | sed "s/.*$2=//" || true; }
isnum() { [[ $1 =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]]; }

# ---------------------------------------------------------------- vendor --
kvbin="$out/krylov_vendor"
have_kv=1
run "$out/krylov_vendor.build.log" nvcc -O3 -std=c++17 -arch=sm_90 -o "$kvbin" \
  "$src/bench/krylov_vendor.cu" -lcusparse -lcublas || have_kv=0

copybw=""
if [ "$have_kv" -eq 1 ] && run "$out/copybw.log" "$kvbin" --copybw; then
  copybw=$(kv "$out/copybw.log" copybw_GBps)
  isnum "$copybw" || copybw=""
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
[ -n "$gpu" ] || gpu="unknown"

# ------------------------------------------------------------------ ours --
# ours NAME SYNC KIND ARG SR: writes the input, runs coopsolve (SR: the value
# of solver.cg_single_reduction), echoes "US BARRIERS" ("fail fail" when it
# fails; "-" for a value not printed).
ours() {
  local name=$1 sync=$2 kind=$3 arg=$4 sr=$5
  local ini="$out/$name-$sync-sr$sr.ini" log="$out/$name-$sync-sr$sr.log"
  {
    if [ "$kind" = poisson2d ]; then
      printf '[grid]\ndim = 2\nnx = %s\nny = %s\n[problem]\ntype = sine\n' "$arg" "$arg"
    else
      printf '[problem]\ntype = matrix\nmatrix = %s\nrhs = ones\n' "$arg"
    fi
    printf '[solver]\nname = cg\ncg_single_reduction = %s\nrtol = 0\nmax_iter = %s\n' "$sr" "$iters"
    printf '[run]\nbackend = cuda\nsync = %s\n' "$sync"
    printf '[output]\nfile = %s\nmonitor_every = 0\n' "$out/tmp.h5"
  } >"$ini"
  if ! run "$log" mpirun -np 1 "$build/coopsolve" "$ini"; then
    echo "fail fail"
    return 0
  fi
  local us bar
  us=$(grep -oE 'per iteration: *[0-9.eE+-]+ *us' "$log" | tail -n 1 |
    sed -E 's/per iteration: *([0-9.eE+-]+) *us/\1/' || true)
  bar=$(grep -oE 'barriers per iteration: *[0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+$' || true)
  isnum "$us" || us="-"
  [[ $bar =~ ^[0-9]+$ ]] || bar="-"
  echo "$us $bar"
}

# vendor NAME METHOD ARGS...: runs one baseline, echoes "US N NNZ" (fail ...)
vendor() {
  local name=$1 method=$2 log="$out/$1-vendor-$2.log"
  shift 2
  local us n nnz
  if [ "$have_kv" -ne 1 ]; then echo "fail - -"; return 0; fi
  if ! run "$log" "$kvbin" "$@" --iters "$iters" --method "$method"; then
    n=$(kv "$log" n)
    nnz=$(kv "$log" nnz)
    echo "fail ${n:--} ${nnz:--}"
    return 0
  fi
  us=$(kv "$log" us_per_iter)
  n=$(kv "$log" n)
  nnz=$(kv "$log" nnz)
  isnum "$us" || us="-"
  echo "$us ${n:--} ${nnz:--}"
}

# ----------------------------------------------------------------- table --
date_utc=$(date -u)
emit "# CG (fp64, no preconditioner): coopsolve vs cuSPARSE/cuBLAS"
emit ""
emit "- command: \`${cmdline% }\`"
emit "- date: $date_utc"
emit "- GPU: $gpu"
emit "- copy bandwidth (cudaMemcpyAsync D2D, 1 GiB, read+write, best of 10): ${copybw:-fail} GB/s"
emit "- iterations: $iters per run (vendor: after 20 warm-up iterations)"
emit ""
emit "| problem | n | nnz | ours grid us/it | barriers/it | ours grid 1-red us/it | barriers/it | ours launch us/it | ours launch 1-red us/it | cuSPARSE per-call us/it | cuSPARSE graph us/it | bytes floor us/it | best grid/floor | speedup best grid vs graph | speedup best grid vs percall |"
emit "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"

problems=(
  "poisson2d 256"
  "poisson2d 512"
  "poisson2d 1024"
  "poisson2d 4096"
  "mtx $src/tests/data/nos6.mtx"
  "mtx $src/tests/data/494_bus.mtx"
  "mtx $src/tests/data/LFAT5.mtx"
)

for p in "${problems[@]}"; do
  kind=${p%% *}
  arg=${p#* }
  if [ "$kind" = poisson2d ]; then # ours' problem kind and the vendor's option for it
    name="poisson2d-$arg" label="poisson2d:$arg" ptype=poisson2d vopt=--poisson2d
  else
    base=$(basename "$arg" .mtx)
    name="mtx-$base" label="$base" ptype=matrix vopt=--mtx
  fi
  read -r grid_us grid_bar < <(ours "$name" grid $ptype "$arg" false)
  read -r sr_us sr_bar < <(ours "$name" grid $ptype "$arg" true)
  read -r launch_us _ < <(ours "$name" launch $ptype "$arg" false)
  read -r lsr_us _ < <(ours "$name" launch $ptype "$arg" true)
  read -r pc_us n nnz < <(vendor "$name" percall $vopt "$arg")
  read -r gr_us n2 nnz2 < <(vendor "$name" graph $vopt "$arg")
  [ "$n" != "-" ] || n=$n2
  [ "$nnz" != "-" ] || nnz=$nnz2
  if [ "$kind" = poisson2d ]; then # sizes known without the vendor run
    [ "$n" != "-" ] || n=$((arg * arg))
    [ "$nnz" != "-" ] || nnz=$((5 * arg * arg - 4 * arg))
  fi

  # Unfused CG bytes per iteration: 12 vector sweeps of n doubles, plus the
  # CSR matrix (values + int32 columns + row pointers) for assembled matrices.
  floor="-" floor_raw="-" bytes=""
  if isnum "$copybw" && [[ $n =~ ^[0-9]+$ ]]; then
    if [ "$kind" = poisson2d ]; then
      bytes=$(awk -v n="$n" 'BEGIN { printf "%.0f", 12 * n * 8 }')
    elif [[ $nnz =~ ^[0-9]+$ ]]; then
      bytes=$(awk -v n="$n" -v z="$nnz" 'BEGIN { printf "%.0f", 12 * n * 8 + z * 12 + (n + 1) * 8 }')
    fi
    if [ -n "$bytes" ]; then # bytes / (GB/s * 1e3) = microseconds
      floor_raw=$(awk -v b="$bytes" -v bw="$copybw" 'BEGIN { printf "%.6g", b / (bw * 1e3) }')
      floor=$(awk -v f="$floor_raw" 'BEGIN { printf (f < 10 ? "%.3f" : "%.1f"), f }')
    fi
  fi
  # the better of the two grid-mode forms
  best=$grid_us
  if isnum "$sr_us" && { ! isnum "$grid_us" || awk -v a="$sr_us" -v b="$grid_us" 'BEGIN { exit !(a < b) }'; }; then
    best=$sr_us
  fi
  ratio="-" sp_graph="-" sp_pc="-"
  grid_us_raw=$grid_us
  grid_us=$best
  if isnum "$grid_us" && awk -v g="$grid_us" 'BEGIN { exit !(g > 0) }'; then
    isnum "$floor_raw" && ratio=$(awk -v g="$grid_us" -v f="$floor_raw" 'BEGIN { printf (f > 0 ? "%.2f" : "-"), g / (f > 0 ? f : 1) }')
    isnum "$gr_us" && sp_graph=$(awk -v g="$grid_us" -v v="$gr_us" 'BEGIN { printf "%.2f", v / g }')
    isnum "$pc_us" && sp_pc=$(awk -v g="$grid_us" -v v="$pc_us" 'BEGIN { printf "%.2f", v / g }')
  fi
  emit "| $label | $n | $nnz | $grid_us_raw | $grid_bar | $sr_us | $sr_bar | $launch_us | $lsr_us | $pc_us | $gr_us | $floor | $ratio | $sp_graph | $sp_pc |"
done

emit ""
emit "Notes:"
emit "- 1-red: CG in the Chronopoulos-Gear form (\`solver.cg_single_reduction = true\`): one reduction, so one grid barrier, per iteration. best grid: the faster of the two grid-mode columns."
emit "- us/it: microseconds per CG iteration. Ours: the \`per iteration\` figure coopsolve prints (rtol = 0, max_iter = $iters); vendor: CUDA-event time of $iters iterations after 20 warm-up ones (bench/krylov_vendor.cu)."
emit "- cuSPARSE per-call: cusparseSpMV (CSR, ALG1) + cuBLAS ddot/daxpy/dscal with host scalars, one call per operation (p = r + beta p as dscal + daxpy). cuSPARSE graph: the same iteration with device scalars, p = r + beta p as one kernel, captured once into a CUDA graph and relaunched."
emit "- bytes floor = bytes / copy bandwidth, for a naive unfused CG iteration: vectors 12n*8 bytes (SpMV reads p, writes q: 2n; (p,q): 2n; two axpys: 3n each; (r,r): n; p update: 3n); assembled matrices add the CSR, nnz*(8+4) + (n+1)*8 bytes (8-byte values, 4-byte column indices, row pointers counted at 8 bytes). Poisson rows use the vectors only, since ours is matrix-free there; the vendor baselines use an assembled CSR on those rows, so their own floor is higher. This is the unfused floor only: fused kernels move fewer bytes and can go below it, and small problems that fit in L2 can too."
emit "- grid/floor = ours grid us/it / floor us/it. speedup = vendor us/it / ours grid us/it (> 1: ours is faster)."
emit "- fail: the run failed (its last lines went to stderr; logs in OUT_DIR); -: not printed or not computable."
