#!/bin/sh
# Every bad Matrix Market file of tests/data/mm_bad (listed in its EXPECT) and
# every bad matrix-problem setting stops the run with exit status 2, one
# message from rank 0 naming the file and line (or the key), and no output file.
. "$COOP_SRCDIR/tests/common.sh"
coop_tmpdir
DATA=$COOP_SRCDIR/tests/data
BAD=$DATA/mm_bad
nc=0

# bad RANKS MESSAGE-PREFIX SUBSTRING ARG...: run in a fresh directory.
bad() {
  n=$1 prefix=$2 sub=$3
  shift 3
  nc=$((nc + 1))
  d=$TMP/case$nc
  mkdir "$d" || fail "cannot make $d"
  printf '[problem]\ntype = matrix\n[solver]\nname = cg\nmax_iter = 5\n[output]\nfile = out.h5\n' >"$d/in.ini"
  what="case $nc ($n ranks, $*)"
  (cd "$d" && coop_mpirun "$n" "$COOPSOLVE" --backend host in.ini "$@" >"$TMP/out" 2>"$TMP/err" </dev/null)
  rc=$?
  [ $rc -eq 2 ] || { cat "$TMP/out" "$TMP/err"; fail "$what: exit status $rc, not 2"; }
  [ ! -s "$TMP/out" ] || { cat "$TMP/out"; fail "$what: wrote to stdout"; }
  lines=$(grep -c '^coopsolve:' "$TMP/err")
  [ "$lines" = 1 ] || { cat "$TMP/err"; fail "$what: $lines coopsolve lines on stderr, not 1"; }
  want="coopsolve: $prefix" awk 'index($0, ENVIRON["want"]) == 1 { n++ } END { exit n != 1 }' \
    "$TMP/err" || { cat "$TMP/err"; fail "$what: no message starting 'coopsolve: $prefix'"; }
  want="$sub" awk 'index($0, ENVIRON["want"]) { n++ } END { exit n != 1 }' "$TMP/err" ||
    { cat "$TMP/err"; fail "$what: message lacks '$sub'"; }
  for f in out.h5 out.h5.tmp out.xmf; do
    [ ! -e "$d/$f" ] || fail "$what: left $f behind"
  done
}

# each bad file at 1 and 2 ranks
while read -r file line rest; do
  case $file in '#'* | '') continue ;; esac
  if [ "$line" = - ]; then prefix="$BAD/$file: "; else prefix="$BAD/$file:$line: "; fi
  for n in 1 2; do
    bad $n "$prefix" "$rest" --set "problem.matrix=$BAD/$file"
  done
done <"$BAD/EXPECT"
[ $nc -ge 60 ] || fail "only $nc bad-file cases ran"

# settings that cannot work
bad 1 "problem.type = matrix needs problem.matrix" "Matrix Market"
bad 1 "solver.name = jacobi (from --set) runs on grid problems only" "use cg" \
  --set "problem.matrix=$DATA/nos6.mtx" --set solver.name=jacobi
bad 2 "solver.pc = jacobi: row 915 of the matrix has a zero or missing diagonal" "solver.pc = none" \
  --set "problem.matrix=$DATA/hangGlider_2.mtx" --set solver.pc=jacobi
bad 1 "problem.rhs = twos: expected ones, random or file:PATH" "twos" \
  --set "problem.matrix=$DATA/nos6.mtx" --set problem.rhs=twos
bad 1 "$DATA/nos6.mtx:" "expected" --set "problem.matrix=$DATA/nos6.mtx" \
  --set "problem.rhs=file:$DATA/nos6.mtx"
bad 1 "solver.precision = fp32: matrix problems are fp64 only" "fp64" \
  --set "problem.matrix=$DATA/nos6.mtx" --set solver.precision=fp32
bad 1 "$TMP/none.mtx: " "No such file" --set "problem.matrix=$TMP/none.mtx"
echo "matrix_input: $nc cases"
