#!/usr/bin/env bash
# Time to solution on one GPU, multigrid against the Krylov and relaxation
# methods: the Laplace problem (problem.type = laplace: zero source, boundary
# values; PROBLEM=sine for the sine source, whose right-hand side is an
# eigenvector, so CG ends at once) to rtol 1e-8 (relative residual
# 2-norm) from a zero guess, fp64 (and fp32 rows in full, to RTOL32, default
# 1e-5: single precision's residual stalls above 1e-8, near 5e-7 at 1024^2
# on the host, so a 1e-8 fp32 row would only show the time limit). For each method:
# iterations or cycles, the mean convergence factor, the time to solution,
# the time an iteration, and the iteration's bytes floor (the method's own
# count of bytes an iteration over the copy bandwidth measured in the same
# call by bench/devlimits.cu). A run that does not end within LIMIT seconds
# (default 60) shows "> LIMIT s". BACKEND=host runs the same table on the host.
#   bench/mg.sh BUILD_DIR OUT_DIR [quick|full]
# quick: 2D 1024^2 and 4096^2, 3D 128^3; full: 2D 1024^2, 4096^2, 16384^2 and
# 3D 128^3, 256^3, 512^3 in fp64, and 2D 4096^2 and 3D 256^3 in fp32.
# Methods: mg in launch, graph and grid mode; cg with pc = mg; cg; cg with
# pc = jacobi; jacobi. The table goes to stdout and OUT_DIR/mg.md.
# ONLY=REGEX keeps the methods whose label matches (ONLY='^mg' for the cycles
# alone); ROWS='2 1024 fp64,3 128 fp32' replaces the tier's rows. RANKS=N runs
# every row on N ranks (mpirun; a rank a GPU where the node has N, else they
# share; multigrid on several ranks runs launch mode only, ONLY='^mg launch|^cg').
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: bench/mg.sh BUILD_DIR OUT_DIR [quick|full]" >&2; exit 2; }
b=$(cd "$1" && pwd) sel=${3:-quick}
mkdir -p "$2"
out=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
limit=${LIMIT:-60} backend=${BACKEND:-cuda} problem=${PROBLEM:-laplace} ranks=${RANKS:-1}
printf '[problem]\ntype = %s\n\n[output]\nfile = mg.h5\n' "$problem" >"$out/base.ini"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
case $sel in
  quick) rows=("2 1024 fp64" "2 4096 fp64" "3 128 fp64") ;;
  full) rows=("2 1024 fp64" "2 4096 fp64" "2 16384 fp64" "3 128 fp64" "3 256 fp64" "3 512 fp64" "2 4096 fp32" "3 256 fp32") ;;
  *) echo "bench/mg.sh: $sel: quick or full" >&2; exit 2 ;;
esac
[ -n "${ROWS:-}" ] && IFS=, read -r -a rows <<<"$ROWS"
methods=("mg launch|mg|launch|" "mg graph|mg|graph|" "mg grid|mg|grid|" "cg, pc = mg|cg|auto|mg"
         "cg|cg|auto|none" "cg, pc = jacobi|cg|auto|jacobi" "jacobi|jacobi|auto|")

nvcc -O2 -arch=sm_90 -o "$out/devlimits" "$src/bench/devlimits.cu" 2>"$out/devlimits.err" &&
  "$out/devlimits" 0 >"$out/devlimits.txt" 2>&1
copy=$(awk '$1 == "copy_gbs" { print $2 }' "$out/devlimits.txt" 2>/dev/null)
copy=${copy:-0}

rtol_of() { [ "$1" = fp32 ] && echo "${RTOL32:-1e-5}" || echo 1e-8; }

one() { # dim n prec solver sync pc [key=value]: prints "its factor seconds us_per_it bytes" or a reason
  local dim=$1 n=$2 p=$3 s=$4 m=$5 pc=$6 x=${7:-} tag="$1d-$2-$3-$4-$5-$6${7:+-${7#*=}}"
  local a=(--backend "$backend" --set grid.dim="$dim" --set grid.nx="$n" --set grid.ny="$n" --set problem.type="$problem"
    --set solver.name="$s" --set solver.precision="$p" --set solver.rtol="$(rtol_of "$p")" --set solver.max_iter=100000000
    --set run.sync="$([ "$backend" = host ] && echo auto || echo "$m")" --set output.monitor_every=0 --set output.fields=false --set output.xdmf=false
    --output "$out/$tag.h5")
  [ "$dim" = 3 ] && a+=(--set grid.nz="$n")
  [ -n "$pc" ] && a+=(--set solver.pc="$pc")
  [ -n "$x" ] && a+=(--set "$x")
  [ "$s" = jacobi ] && a+=(--set solver.check_every=100)
  local run=("$b/coopsolve")
  [ "$ranks" -gt 1 ] && run=(mpirun --oversubscribe -np "$ranks" "$b/coopsolve")
  timeout "$limit" "${run[@]}" "$out/base.ini" "${a[@]}" >"$out/$tag.log" 2>&1
  local rc=$?
  if [ $rc = 124 ]; then echo "> ${limit} s"; return; fi
  [ $rc = 0 ] || { echo "failed (exit $rc)"; return; }
  awk '/^  iterations / { it = $2 } /mean convergence factor/ { f = $NF }
       /^  time / { t = $2 } /^  per iteration:/ { us = $3 }
       /by the method.s count of/ { for (i = 1; i <= NF; i++) if ($i == "of" && $(i + 2) == "bytes") by = $(i + 1) }
       /^  reason / { r = $2 }
       END { if (r !~ /^converged/) { print "ended " r; exit }
             printf "%s %s %s %s %s\n", it, f == "" ? "-" : f, t, us, by }' "$out/$tag.log"
}

{
  echo "# Time to solution, $problem problem, rtol 1e-8 (fp32: $(rtol_of fp32)), $ranks rank(s) ($(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | paste -sd, -))"
  echo
  echo "- Date: $(date -u +%F). Command: \`bench/mg.sh BUILD $sel\`; $("$b/coopsolve" --version | head -1)."
  echo "- Copy bandwidth measured in this call: $copy GB/s (bench/devlimits.cu). Floor: the method's bytes an"
  echo "  iteration (its own count) over that bandwidth."
  echo
  echo "| problem | method | its or cycles | factor | time to solution | per it | floor per it | per it / floor |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
} | tee "$out/mg.md"
for r in "${rows[@]}"; do
  read -r dim n p <<<"$r"
  box=$([ "$dim" = 3 ] && echo "${n}^3" || echo "${n}^2")
  for md in "${methods[@]}"; do
    IFS='|' read -r name s m pc x <<<"$md"
    [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]] && continue
    res=$(one "$dim" "$n" "$p" "$s" "$m" "$pc" "$x")
    read -r it f t us by <<<"$res"
    if [[ $it =~ ^[0-9]+$ ]]; then
      floor=$(awk -v by="$by" -v c="$copy" 'BEGIN { if (c > 0) printf "%.1f", by / c / 1e3; else print "-" }')
      ratio=$(awk -v us="$us" -v fl="$floor" 'BEGIN { if (fl + 0 > 0) printf "%.2f", us / fl; else print "-" }')
      printf '| %s %s | %s | %s | %s | %s s | %s us | %s us | %s |\n' "$box" "$p" "$name" "$it" "$f" "$t" "$us" "$floor" "$ratio"
    else
      printf '| %s %s | %s | %s | | | | | |\n' "$box" "$p" "$name" "$res"
    fi
  done | tee -a "$out/mg.md"
done
