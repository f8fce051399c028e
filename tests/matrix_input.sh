#!/bin/sh
# Every bad Matrix Market file of tests/data/mm_bad (listed in its EXPECT) and
# every bad matrix-problem setting stops the run with exit status 2, one
# message from rank 0 naming the file and line (or the key), and no output file.
. "$COOP_SRCDIR/tests/common.sh"
coop_tmpdir
DATA=$COOP_SRCDIR/tests/data
BAD=$DATA/mm_bad
nc=0

# bad RANKS MESSAGE-PREFIX SUBSTRING ARG...: a matrix input in a fresh
# directory; coop_expect_input_error (tests/common.sh) checks the run.
bad() {
  n=$1 prefix=$2 sub=$3
  shift 3
  coop_case_dir
  printf '[problem]\ntype = matrix\n[solver]\nname = cg\nmax_iter = 5\n[output]\nfile = out.h5\n' >"$d/in.ini"
  what="case $nc ($n ranks, $*)"
  coop_expect_input_error "$d" "$n" "$prefix" "$sub" in.ini "$@"
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
# the vector settings are checked with the problem, so a dry run stops too
bad 1 "problem.x0 = zeros: expected zero or file:PATH" "zeros" \
  --set "problem.matrix=$DATA/nos6.mtx" --set problem.x0=zeros --dry-run
bad 2 "problem.rhs = file:: no path after file:" "file:PATH" \
  --set "problem.matrix=$DATA/nos6.mtx" --set problem.rhs=file:
# vectors of the wrong length; fewer rows than ranks
printf '%%%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n' >"$TMP/v3.mtx"
bad 2 "$TMP/v3.mtx:2: the vector is 3 x 1: expected 675 x 1" "expected 675 x 1" \
  --set "problem.matrix=$DATA/nos6.mtx" --set "problem.x0=file:$TMP/v3.mtx"
bad 3 "$TMP/v3.mtx:2: the vector is 3 x 1: expected 675 x 1" "expected 675 x 1" \
  --set "problem.matrix=$DATA/nos6.mtx" --set "problem.rhs=file:$TMP/v3.mtx" --set problem.x0=zero
# ...and a dry run reads them too (the Slurm scripts rely on it to stop bad input)
bad 2 "$TMP/v3.mtx:2: the vector is 3 x 1: expected 675 x 1" "expected 675 x 1" \
  --set "problem.matrix=$DATA/nos6.mtx" --set "problem.rhs=file:$TMP/v3.mtx" --dry-run
bad 1 "$TMP/none.mtx: " "No such file" --set "problem.matrix=$DATA/nos6.mtx" --set "problem.x0=file:$TMP/none.mtx" \
  --dry-run
# a missing diagonal entry with solver.pc = jacobi: the row named, in a dry run as in a run
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 4\n1 1 2\n2 2 2\n3 3 2\n4 3 1\n' >"$TMP/nodiag.mtx"
# and a diagonal entry too small to invert (its inverse overflows: the run
# would end diverged_nan)
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 4\n1 1 2\n2 2 2\n3 3 1e-320\n4 4 1\n' >"$TMP/tinydiag.mtx"
for dry in "" --dry-run; do
  for n in 1 2; do
    bad $n "solver.pc = jacobi: row 4 of the matrix has a zero or missing diagonal entry" "" \
      --set "problem.matrix=$TMP/nodiag.mtx" --set solver.pc=jacobi $dry
    bad $n "solver.pc = jacobi: row 3 of the matrix has the diagonal entry 9.99989e-321, too small to invert" "" \
      --set "problem.matrix=$TMP/tinydiag.mtx" --set solver.pc=jacobi $dry
  done
done
# a size line alone must not size the reader's arrays past what a rank may hold
printf '%%%%MatrixMarket matrix coordinate real general\n3000000000 3000000000 1\n1 1 1\n' >"$TMP/wide.mtx"
bad 1 "$TMP/wide.mtx: 3000000000 rows, 3000000000 of them on rank 0: at most 2^31 - 1 rows a rank" "" \
  --set "problem.matrix=$TMP/wide.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n500000000 500000000 1\n1 1 1\n' >"$TMP/tall.mtx"
if [ -n "${COOP_SANITIZE:-}" ]; then
  echo "skip: the tall matrix under ulimit -v (AddressSanitizer's shadow memory does not fit it)"
else
  (ulimit -v 3000000 && bad 2 "$TMP/tall.mtx: 500000000 rows: rank 0 would hold 3814.7 MiB of row pointers" \
    "a rank of this node may use" --set "problem.matrix=$TMP/tall.mtx" --dry-run) || exit 1
  nc=$((nc + 1)) # taken in the subshell
fi
printf '%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n' >"$TMP/one.mtx"
bad 2 "$TMP/one.mtx: 1 rows cannot be shared by 2 ranks" "2 ranks" --set "problem.matrix=$TMP/one.mtx"
# A matrix that only rank 1 cannot read (a path that is not on its node): the
# rank that met the input error says why, once (rank 0 printed an empty line).
# Two programs in one job, each in its own directory: Open MPI's syntax.
if "$MPIEXEC" --version 2>&1 | grep -Eq 'Open MPI|OpenRTE'; then
  nc=$((nc + 1))
  mkdir "$TMP/w0" "$TMP/w1" || fail "cannot make $TMP/w0"
  cp "$DATA/LFAT5.mtx" "$TMP/w0/m.mtx" || fail "cannot copy LFAT5.mtx"
  printf '[problem]\ntype = matrix\nmatrix = m.mtx\n[solver]\nname = cg\n[output]\nfile = %s\n' \
    "$TMP/w0/out.h5" >"$TMP/mpmd.ini"
  rc=0
  "$MPIEXEC" -np 1 --wdir "$TMP/w0" "$COOPSOLVE" --backend host "$TMP/mpmd.ini" : \
    -np 1 --wdir "$TMP/w1" "$COOPSOLVE" --backend host "$TMP/mpmd.ini" >"$TMP/out" 2>"$TMP/err" </dev/null ||
    rc=$?
  [ $rc -eq 2 ] || { cat "$TMP/out" "$TMP/err"; fail "matrix missing on rank 1: exit status $rc, not 2"; }
  [ "$(grep -c '^coopsolve:' "$TMP/err")" = 1 ] && grep -q '^coopsolve: m.mtx: cannot open' "$TMP/err" ||
    { cat "$TMP/err"; fail "matrix missing on rank 1: not one message naming m.mtx"; }
  [ ! -e "$TMP/w0/out.h5" ] || fail "matrix missing on rank 1: left out.h5 behind"
fi
# grid problems take b and x0 from their type: other choices are refused, not ignored
bad 1 "problem.rhs = random (from --set) applies to problem.type = matrix, not to sine" "sine" \
  --set problem.type=sine --set grid.nx=8 --set problem.rhs=random
bad 2 "problem.x0 = file:x.mtx (from --set) applies to problem.type = matrix, not to laplace" "laplace" \
  --set problem.type=laplace --set grid.nx=8 --set problem.x0=file:x.mtx
# grid keys beside a matrix are not used, and a note says so (the input may serve both kinds of run)
coop_mpirun 2 "$COOPSOLVE" --backend host "$INPUTS/quickstart.ini" --set problem.type=matrix \
  --set "problem.matrix=$DATA/nos6.mtx" --set solver.name=cg --set grid.ghost=2 --dry-run >"$TMP/note.out" 2>"$TMP/note.err" ||
  { cat "$TMP/note.err"; fail "a matrix run with grid keys set"; }
[ "$(grep -c '^coopsolve: note: grid.nx, grid.ny, grid.ghost set but not used: problem.type = matrix takes its size from' \
  "$TMP/note.err")" = 1 ] || { cat "$TMP/note.err"; fail "no note (once) on the unused grid keys"; }
echo "matrix_input: $nc cases"
