#!/usr/bin/env bash
# The CSR product's schedules (kernels/csr.cu's row-balanced plan = auto;
# kernels/csr_tiles.cu's row tiles handed out static, atomic or by cluster
# launch control) on skewed matrices, timed by bench/csr_sched (built here
# against the build's libcoop.a, so it times the solver's own kernels).
#   bench/csr.sh BUILD_DIR OUT_DIR MATRIX_DIR
# Matrices: adder_dcop_05.mtx and hangGlider_2.mtx from MATRIX_DIR (1-2 K
# rows: latency, not bandwidth), and generated ones of rows of 3 entries
# among a few rows of 10^4 (seeded): 100 K rows with 8 long ones, and 1 M and
# 8 M rows with 64 long ones, where the GPU is full. Per matrix and schedule:
# us per product, GB/s over coop_csr_bytes, the imbalance (busiest SM's busy
# time over the mean), the speed-up over static, the difference from a host
# product and whether the tile schedules' bits match static's (csr_sched
# exits 1 otherwise: the row says so). CSR_REPS (default 200) products are
# timed per row. Table to stdout and OUT_DIR/csr.md; logs in OUT_DIR.
set -uo pipefail
usage="usage: bench/csr.sh BUILD_DIR OUT_DIR MATRIX_DIR"
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
build=$(cd "$1" && pwd) || { echo "$usage" >&2; exit 2; }
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
mdir=$(cd "$3" && pwd) || { echo "$usage" >&2; exit 2; }
reps=${CSR_REPS:-200}
make -C "$build" bench/csr_sched >"$out/csr-build.log" 2>&1 ||
  { tail -20 "$out/csr-build.log" >&2; echo "csr.sh: bench/csr_sched does not build" >&2; exit 1; }
bin=$build/bench/csr_sched

cases=(
  "adder_dcop_05 $mdir/adder_dcop_05.mtx"
  "hangGlider_2 $mdir/hangGlider_2.mtx"
  "heavy-100K gen:100000:8:10000:1"
  "heavy-1M gen:1000000:64:10000:2"
  "heavy-8M gen:8000000:64:10000:3"
)
md=$out/csr.md
{
  echo "# CSR product schedules: $(date -u +%Y-%m-%dT%H:%MZ), $(cd "$(dirname "$0")/.." && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  echo "\`bench/csr.sh $*\`; heavy-N: N rows of 3 entries, a few (8, 64) of 10^4, seeded."
  echo
} >"$md"
status=0
header=--header
for c in "${cases[@]}"; do
  # shellcheck disable=SC2086
  set -- $c
  echo "csr.sh: $1" >&2
  "$bin" --reps "$reps" $header "$1" "$2" >"$out/$1.md" 2>"$out/$1.err"
  rc=$?
  if [ -s "$out/$1.md" ]; then
    cat "$out/$1.md" >>"$md"
    header=
  fi
  if [ $rc -ne 0 ]; then
    status=1
    echo "csr.sh: $1: exit status $rc: $(tail -1 "$out/$1.err")" >&2
  fi
  grep -v '^$' "$out/$1.err" >&2 || true
done
cat "$md"
exit $status
