#!/bin/sh
# A run-time failure on one rank stops every rank, with status 1, a message
# from the rank that failed, no hang and no output file. Faults are injected
# with COOP_FAULT=WHERE:RANK (src/comm.h): inside the solve (halo: MPI_Abort
# path) and at the output (agreed path).
. "$COOP_SRCDIR/tests/common.sh"
coop_tmpdir
command -v timeout >/dev/null 2>&1 || { echo "SKIP: no timeout(1)"; exit 77; }

fault() { # where, ranks, expected message count
  where=$1 n=$2
  rm -f "$TMP"/*
  rc=0
  COOP_FAULT="$where:1" timeout 120 "$SHELL" -c '. "$COOP_SRCDIR/tests/common.sh"; coop_mpirun "$@"' \
    sh "$n" "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set solver.max_iter=40 \
    --set solver.check_every=10 --set output.monitor_every=0 --output "$TMP/f.h5" \
    >"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
  [ "$rc" != 124 ] || fail "$where fault at $n ranks: hung (killed by timeout)"
  [ "$rc" != 0 ] || fail "$where fault at $n ranks: exit status 0"
  [ "$(grep -c '^coopsolve: rank 1: .*fault injected' "$TMP/err.txt")" = 1 ] ||
    { cat "$TMP/err.txt"; fail "$where fault: rank 1's message is not printed once"; }
  ! grep -q '^coopsolve: rank [02]' "$TMP/err.txt" ||
    { cat "$TMP/err.txt"; fail "$where fault: a rank that did not fail printed an error"; }
  for f in f.h5 f.h5.tmp f.xmf f.xmf.tmp; do
    [ ! -e "$TMP/$f" ] || fail "$where fault: $f left behind"
  done
  echo "$where fault at $n ranks: status $rc, one message, nothing written"
}

fault halo 2
fault halo 3
fault output 2
fault output 3
# the agreed path ends every rank with status 1 exactly
rc=0
COOP_FAULT=output:1 coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" \
  --set solver.max_iter=10 --set output.monitor_every=0 --output "$TMP/g.h5" >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "output fault: exit status $rc, not 1"
