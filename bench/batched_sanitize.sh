#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck on the batched kernels
# (solvers/batch/batch_cuda.cu): split rows (static, atomic; top 8 and auto), rows,
# grid, clusters, blocks, launch, heat and Jacobi, on small batches. One line
# per run with the tool's summary; exit 1 when any run fails or reports.
#   bench/batched_sanitize.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:?usage: bench/batched_sanitize.sh BUILD_DIR}" && pwd) || exit 2
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '[batch]\ncount = 14\nsizes = loguniform:4:72\nshift = loguniform:0.01:100\nrhs = random\nseed = 21\n[solver]\nname = cg\npc = jacobi\nrtol = 1e-8\n' >"$tmp/rag.ini"
printf '[batch]\ncount = 12\nsizes = uniform:20\nshift = uniform:0:100\nrhs = random\nseed = 3\n[solver]\nname = cg\nrtol = 1e-8\n' >"$tmp/uni.ini"
printf '[batch]\ncount = 14\nsizes = loguniform:4:72\nshift = uniform:0:10\nrhs = random\nseed = 5\n[solver]\nname = heat\nmax_iter = 30\n' >"$tmp/heat.ini"
printf '[batch]\ncount = 14\nsizes = loguniform:4:72\nshift = uniform:1:100\nrhs = random\nseed = 7\n[solver]\nname = jacobi\nrtol = 1e-4\nmax_iter = 400\n' >"$tmp/jac.ini"
status=0
for tool in memcheck racecheck synccheck; do
  for cfg in "rag row static 8" "rag row atomic 8" "rag row atomic 0" "uni row atomic 3" "uni grid atomic 3" \
    "uni cluster atomic 4" "uni block static 0" "rag block atomic 0" "uni launch static 0" "heat row atomic 4" \
    "jac row static 4"; do
    set -- $cfg
    timeout -k 5 40 "$cs" --tool $tool --error-exitcode 9 "$build/coopsolve" "$tmp/$1.ini" --backend cuda \
      --set batch.sync="$2" --set batch.schedule="$3" --set tune.group_blocks="$4" --set output.monitor_every=0 \
      --output "$tmp/cs.h5" >"$tmp/cs.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || status=1
    echo "$tool $cfg: rc $rc: $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$tmp/cs.log" | tr '\n' ' ')" \
      "$(grep -h 'blocks per group' "$tmp/cs.log" | sed 's/.*rank 0: //' | cut -c1-40)"
  done
done
exit $status
