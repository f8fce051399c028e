#!/usr/bin/env bash
# A multigrid change against the version before it, in one call on the GPU
# machine: builds DEVKIT/coopsolve.tar.gz (as bench/gpu_check.sh does, into
# /tmp/build) and DEVKIT/base/*.tar.gz (into /tmp/build-base) side by side,
# then bench/mg.sh's multigrid rows on both, one build after the other for
# each repeat, so both see the same GPU. Runs' files stay under /tmp; the
# tables and a side-by-side summary (time a cycle, new over base) go to OUT.
#   bench/mg_ab.sh DEVKIT OUT
# ROWS (bench/mg.sh's form; default 1024^2, 4096^2 fp64 and fp32, 128^3),
# ONLY (default '^mg '), REPEAT (default 2), LIMIT (a run, default 20 s).
set -uo pipefail
devkit=$(cd "${1:?usage: bench/mg_ab.sh DEVKIT OUT}" && pwd) || exit 2
mkdir -p "${2:?usage: bench/mg_ab.sh DEVKIT OUT}"
out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/devkit_env.sh"
base=$(ls "$devkit"/base/*.tar.gz 2>/dev/null | head -1)
[ -n "$base" ] || { echo "bench/mg_ab.sh: no $devkit/base/*.tar.gz (the version to compare with)" >&2; exit 2; }
t0=$(date +%s)
(rm -rf /tmp/base-src /tmp/build-base && mkdir -p /tmp/base-src /tmp/build-base &&
  tar xzf "$base" -C /tmp/base-src --strip-components=1 && cd /tmp/build-base &&
  /tmp/base-src/configure CC=mpicc --with-cuda-arch=sm_90 CUNIT_CFLAGS="-I$dep/usr/include" \
    CUNIT_LIBS="-L$lib -lcunit" HDF5_CFLAGS="-I$dep/usr/include/hdf5/openmpi" \
    HDF5_LIBS="-L$lib/hdf5/openmpi -lhdf5" >"$out/base-configure.log" 2>&1 &&
  make -j"$(nproc)" coopsolve >"$out/base-make.log" 2>&1) &
bpid=$!
bash "$here/gpu_check.sh" "$devkit" "$out/new" >"$out/new-build.txt" 2>&1 || { cat "$out/new-build.txt"; exit 1; }
wait $bpid || { tail -20 "$out/base-make.log"; exit 1; }
echo "both built: $(($(date +%s) - t0)) s"
rows=${ROWS:-2 1024 fp64,2 4096 fp64,2 4096 fp32,3 128 fp64}
for rep in $(seq "${REPEAT:-2}"); do
  for v in new base; do
    b=/tmp/build
    [ $v = base ] && b=/tmp/build-base
    ONLY=${ONLY:-'^mg '} ROWS=$rows LIMIT=${LIMIT:-20} bash "$here/mg.sh" "$b" "/tmp/mg-ab-$v-$rep" quick >/dev/null 2>&1
    cp "/tmp/mg-ab-$v-$rep/mg.md" "$out/mg-$v-$rep.md" 2>/dev/null
  done
done
# per row and method: the least time a cycle over the repeats, new and base
{
  echo "| problem | method | base us a cycle | new us a cycle | new / base |"
  echo "| --- | --- | ---: | ---: | ---: |"
  for v in new base; do
    cat "$out"/mg-$v-*.md 2>/dev/null | awk -F'|' -v v=$v '$2 ~ /[0-9]\^/ && $7 ~ /us/ {
        k = $2 "|" $3; t = $7 + 0; if (!(k in m) || t < m[k]) m[k] = t }
      END { for (k in m) print v "|" k "|" m[k] }'
  done | awk -F'|' '{ t[$2 "|" $3, $1] = $4; keys[$2 "|" $3] = 1 }
    END { for (k in keys) { b = t[k, "base"]; n = t[k, "new"]
            printf "|%s| %s | %s | %s |\n", k, b == "" ? "-" : b, n == "" ? "-" : n,
                   (b > 0 && n > 0) ? sprintf("%.3f", n / b) : "-" } }' | sort
} | tee "$out/ab.md"
echo "mg_ab: $(($(date +%s) - t0)) s"
