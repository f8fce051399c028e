#!/usr/bin/env bash
# The one-GPU Jacobi kernel paths side by side, to judge which earn their
# place: for each row (Laplace on an N^2 or N^3 box, precision, a residual
# every C sweeps) the time a sweep of every path, each forced by its keys,
# and of what run.sync = auto picks. A path a row cannot take (the on-chip
# field on a box that does not fit) shows "-".
#   bench/paths.sh BUILD_DIR OUT_DIR [quick|full]
# ROWS="DIM N PREC CHECK,..." runs those rows instead (e.g. the rows a
# 10-minute call left out: ROWS="2 512 fp64 1,3 64 fp64 100").
# Paths: launch (a kernel a sweep), graph (those kernels replayed from a CUDA
# graph), grid 1/pass and grid 2/pass (the whole solve in one persistent
# kernel streaming the field, one or two sweeps a pass: tune.fuse_sweeps),
# on-chip (the field held in registers or shared memory: tune.resident).
# One rank, 1000 sweeps (3D: 200) that never stop early (bench/sweep_one.sh).
# The table goes to stdout and OUT_DIR/paths.md.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: bench/paths.sh BUILD_DIR OUT_DIR [quick|full]" >&2; exit 2; }
b=$1 out=$2 sel=${3:-quick}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
rows=()
case $sel in
  quick) for p in fp32 fp64; do for n in 256 1024 4096 8192; do for c in 1 100; do rows+=("2 $n $p $c"); done; done; done
         rows+=("3 128 fp64 100" "3 256 fp64 100") ;;
  full) for p in fp32 fp64; do for n in 128 256 512 1024 2048 4096 8192 16384; do for c in 1 100; do rows+=("2 $n $p $c"); done; done; done
        for n in 64 128 256 512; do rows+=("3 $n fp64 1" "3 $n fp64 100"); done ;;
  *) echo "bench/paths.sh: $sel: quick or full" >&2; exit 2 ;;
esac
[ -z "${ROWS:-}" ] || IFS=, read -r -a rows <<<"$ROWS"
paths=("launch|launch" "graph|graph" "grid 1/pass|grid tune.resident=false tune.fuse_sweeps=1"
       "grid 2/pass|grid tune.resident=false tune.fuse_sweeps=2" "on-chip|grid tune.resident=true" "auto|auto")
one() { # dim n prec check mode keys...: "US PLAN" or "- -"
  local dim=$1 n=$2 p=$3 c=$4 m=$5
  shift 5
  local extra=()
  [ "$dim" = 3 ] && extra=(grid.dim=3 grid.nz="$n" solver.max_iter=200)
  local o
  o=$(SWEEP_PLAN=1 bash "$here/sweep_one.sh" "$b" x "$n" "$p" "$c" "$m" "${extra[@]}" "$@" 2>&1)
  local us plan
  us=$(echo "$o" | awk '/us\/sweep/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "us/sweep") print $i }' | head -1)
  plan=grid1
  echo "$o" | grep -q "field: held in registers" && plan=registers
  echo "$o" | grep -q "field: held in shared memory" && plan=smem
  echo "$o" | grep -q "field: two sweeps a pass" && plan=grid2
  [ "$m" = launch ] && plan=launch
  [ "$m" = graph ] && plan=graph
  echo "${us:--} $plan"
}
{
  echo "# Jacobi kernel paths, one GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
  echo
  echo "- Date: $(date -u +%F). Command: \`bench/paths.sh BUILD $sel\`; $($b/coopsolve --version | head -1)."
  echo "- Microseconds a sweep (solve time over sweeps), one run each; \"-\": the path does not take this box."
  echo
  echo "| box | prec | check | launch | graph | grid 1/pass | grid 2/pass | on-chip | auto (its path) | fastest, by |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
} | tee "$out/paths.md"
for r in "${rows[@]}"; do
  read -r dim n p c <<<"$r"
  cells=() names=() vals=()
  for pd in "${paths[@]}"; do
    name=${pd%%|*} spec=${pd#*|}
    read -r m keys <<<"$spec"
    # shellcheck disable=SC2086
    read -r us plan <<<"$(one "$dim" "$n" "$p" "$c" "$m" $keys)"
    case $name in
      "on-chip") [ "$plan" = registers ] || [ "$plan" = smem ] || us=-; [ "$us" = - ] || name="on-chip ($plan)" ;;
      "grid 2/pass") [ "$plan" = grid2 ] || us=- ;;
      auto) us="$us ($plan)" ;;
    esac
    cells+=("$us")
    [ "${pd%%|*}" = auto ] || [ "${us%% *}" = - ] || { names+=("$name"); vals+=("${us%% *}"); }
  done
  best=$(for i in "${!vals[@]}"; do echo "${vals[$i]} ${names[$i]}"; done | sort -g | head -2 |
    awk 'NR == 1 { v = $1; $1 = ""; n = $0 } NR == 2 { printf "%s, %.0f%%", n, 100 * ($1 / v - 1) } END { if (NR == 1) print n }')
  box=$([ "$dim" = 3 ] && echo "${n}^3" || echo "${n}^2")
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |%s |\n' "$box" "$p" "$c" "${cells[@]}" "$best" | tee -a "$out/paths.md"
done
