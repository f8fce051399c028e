#!/bin/sh
# Checkpoints and restarts, host backend:
#  - each method, cut short after a checkpoint and restarted, ends with the
#    same field and history bits as one uninterrupted run (same rank count);
#  - a stencil state restarts at another rank count (Jacobi: same bits);
#  - SIGTERM to the ranks (what scancel and a time limit send): a checkpoint,
#    exit status 3, the previous output untouched, and the restart finishes
#    the same field; run.on_signal = continue writes one and goes on;
#  - SIGKILL of one rank: mpirun ends non-zero within seconds and the last
#    checkpoint still opens;
#  - signals all through a run, writes included: never a temporary file left,
#    the output either whole or the previous one intact;
#  - a restart file that is missing, a FIFO, an output file, or of another
#    problem: exit 2 naming it;
#  - a run stopped at max_iter leaves a final checkpoint there, from which a
#    longer run goes on to the bits of one run (each method, 1 and 2 ranks).
. "$COOP_SRCDIR/tests/common.sh"
coop_python
coop_tmpdir
INPUTS=$(cd "$INPUTS" && pwd) DATA=$(cd "$COOP_SRCDIR/tests/data" && pwd)
H5CHECK=$(cd "$(dirname "$H5CHECK")" && pwd)/h5check.py
case $COOPSOLVE in /*) ;; *) COOPSOLVE=$(pwd)/$COOPSOLVE ;; esac
cd "$TMP" || fail "cd $TMP"

run() { # name ranks args...: a run that must succeed
  name=$1 n=$2
  shift 2
  rc=0
  coop_mpirun "$n" "$COOPSOLVE" --backend host --set output.monitor_every=0 --output "$name.h5" "$@" \
    >"$name.out" 2>"$name.err" || rc=$?
  [ $rc = 0 ] || { cat "$name.out" "$name.err"; fail "$name: exit status $rc"; }
}

# same A B: fields and the residual history bit for bit
same() {
  $PY "$H5CHECK" same "$1" "$2" >/dev/null || fail "$1 and $2: fields differ"
  $PY - "$1" "$2" <<'EOF' || fail "$1 and $2: histories differ"
import sys, h5py, numpy as np
a, b = (h5py.File(f, "r")["history"] for f in sys.argv[1:3])
for k in a:
    if not np.array_equal(a[k][()], b[k][()]):
        sys.exit(f"/history/{k} differs")
EOF
}

jac="$INPUTS/poisson2d.ini --set grid.nx=40 --set grid.ny=30 --set solver.name=jacobi --set solver.check_every=10 --set solver.rtol=1e-4"
mat="$INPUTS/matrix.ini --set problem.matrix=$DATA/nos6.mtx --set solver.rtol=1e-10"
grd="$INPUTS/cg_poisson.ini --set problem.type=laplace --set grid.nx=30 --set grid.ny=20 --set solver.rtol=1e-10"

# restart CASE RANKS CUT EVERY RESTART_RANKS args...: uninterrupted against cut + restarted
restart() {
  c=$1 n=$2 cut=$3 every=$4 rn=$5
  shift 5
  run $c-full "$n" "$@"
  run $c-cut "$n" "$@" --set solver.max_iter=$cut --set output.checkpoint_every=$every
  [ -f $c-cut.ckpt.h5 ] || fail "$c: no checkpoint written"
  run $c-rest "$rn" "$@" --restart $c-cut.ckpt.h5
  grep -q "iterations" $c-rest.out || fail "$c: restarted run printed no summary"
}
restart jac 2 200 50 2 $jac
same jac-full.h5 jac-rest.h5
restart jac3 2 200 50 3 $jac # another rank count: Jacobi's fields are the same bits anyway
$PY "$H5CHECK" same jac3-full.h5 jac3-rest.h5 >/dev/null || fail "jacobi restarted at 3 ranks differs"
restart cg 2 40 20 2 $mat --set solver.name=cg
same cg-full.h5 cg-rest.h5
restart cgsr 1 40 20 1 $mat --set solver.name=cg --set solver.cg_single_reduction=true
same cgsr-full.h5 cgsr-rest.h5
restart pipe 2 30 10 2 $mat --set solver.name=pipecg
same pipe-full.h5 pipe-rest.h5
restart bicg 2 20 10 2 $mat --set solver.name=bicgstab
same bicg-full.h5 bicg-rest.h5
restart gcg 2 30 10 4 $grd --set solver.name=cg --set solver.pc=jacobi # stencil CG at 4 ranks
$PY "$H5CHECK" close gcg-full.h5 gcg-rest.h5 --rtol 1e-10 >/dev/null || fail "stencil CG restarted at 4 ranks"
echo "restarts: same bits"

# SIGTERM to the ranks of a long run: checkpoint, status 3, old output kept
long="$INPUTS/poisson2d.ini --set grid.nx=300 --set grid.ny=300 --set solver.name=jacobi --set solver.rtol=0 --set solver.max_iter=100000000 --set solver.check_every=100"
echo previous >sig.h5
coop_mpirun 2 "$COOPSOLVE" --backend host $long --set output.monitor_every=0 --output sig.h5 >sig.out 2>sig.err &
coop_sigterm $! sig.h5
[ $rc = 3 ] || { cat sig.out sig.err; fail "SIGTERM: exit status $rc, not 3"; }
grep -q "stopped by SIGTERM" sig.out || fail "SIGTERM: no message"
[ "$(cat sig.h5)" = previous ] || fail "SIGTERM: the previous output was touched"
it=$($PY -c 'import h5py; print(int(h5py.File("sig.ckpt.h5")["checkpoint"].attrs["iteration"]))')
[ "$it" -gt 0 ] || fail "SIGTERM: checkpoint at iteration $it"
# the checkpoint keeps the history up to its iteration, as /history of an output
$PY - "$it" <<'EOF' || fail "SIGTERM: the checkpoint's /history does not end at iteration $it"
import sys, h5py
h = h5py.File("sig.ckpt.h5")["history"]
assert h["iteration"][-1] == int(sys.argv[1]) and len(h["residual"]) == len(h["iteration"]) > 1
EOF
# the restart, stopped at the same count as a run that went straight there
run sig-rest 2 $long --restart sig.ckpt.h5 --set solver.max_iter=$((it + 300))
run sig-full 2 $long --set solver.max_iter=$((it + 300))
same sig-full.h5 sig-rest.h5
echo "SIGTERM: checkpoint at iteration $it, status 3, restart the same bits"

# checkpoints damaged inside (h5py): exit 2, one message naming the file, before
# any work where the structure shows it (else at the solve's start), no output
bad_ckpt() { # name, python statements on f (the copy, open r+), message part
  cp sig.ckpt.h5 "dmg-$1.h5" || fail "cannot copy the checkpoint"
  $PY -c "import h5py, numpy as np
f = h5py.File('dmg-$1.h5', 'r+')
$2" || fail "damaged checkpoint $1: h5py failed"
  rc=0
  coop_mpirun 2 "$COOPSOLVE" --backend host $long --set solver.max_iter=$((it + 50)) --set output.monitor_every=0 \
    --restart "dmg-$1.h5" --output dmg.h5 >dmg.out 2>dmg.err </dev/null || rc=$?
  [ $rc = 2 ] || { cat dmg.err; fail "damaged checkpoint $1: exit status $rc, not 2"; }
  [ "$(grep -c '^coopsolve:' dmg.err)" = 1 ] || { cat dmg.err; fail "damaged checkpoint $1: not one message"; }
  grep -q "dmg-$1.h5: .*$3" dmg.err || { cat dmg.err; fail "damaged checkpoint $1: message lacks '$3'"; }
  [ ! -e dmg.h5 ] || fail "damaged checkpoint $1: an output was written"
  echo "damaged checkpoint $1: exit 2, one message"
}
bad_ckpt transposed "u = f['checkpoint/u'][...]; del f['checkpoint/u']; f['checkpoint/u'] = u[:, :-1]" \
  "/checkpoint/u has extent 299 along axis 1"
bad_ckpt strings "del f['checkpoint/u']; f['checkpoint/u'] = np.array([b'x'] * 9)" "/checkpoint/u is not a floating-point dataset"
bad_ckpt threed "u = f['checkpoint/u'][...]; del f['checkpoint/u']; f['checkpoint/u'] = u.reshape(1, 300, 300)" \
  "is not 2-dimensional"
bad_ckpt negative "f['checkpoint'].attrs['iteration'] = np.int64(-5)" "/checkpoint attribute 'iteration' = -5 is outside 0"
# attributes and datasets of another kind or range than coopsolve writes
bad_ckpt iteration-text "f['checkpoint'].attrs['iteration'] = 'seven'" "/checkpoint attribute 'iteration' is not an integer"
bad_ckpt iteration-huge "f['checkpoint'].attrs['iteration'] = np.int64(2**62)" \
  "/checkpoint attribute 'iteration' = 4611686018427387904 is outside 0 .. solver.max_iter"
bad_ckpt r0-text "f['checkpoint'].attrs['r0'] = 'big'" "/checkpoint attribute 'r0' is not a finite number"
bad_ckpt r0-nan "f['checkpoint'].attrs['r0'] = np.nan" "/checkpoint attribute 'r0' is not a finite number"
bad_ckpt r0-int "f['checkpoint'].attrs['r0'] = np.int32(3)" "/checkpoint attribute 'r0' is not a finite number"
bad_ckpt solver-int "f['checkpoint'].attrs['solver'] = np.int64(3)" "/checkpoint attribute 'solver' is not a string"
bad_ckpt format-text "f['checkpoint'].attrs['format'] = 'one'" "/checkpoint attribute 'format' is not an integer"
bad_ckpt no-r0 "del f['checkpoint'].attrs['r0']" "/checkpoint has no attribute 'r0'"
bad_ckpt scalar-inf "f['checkpoint/scalars'].attrs['extra'] = np.inf" \
  "/checkpoint/scalars attribute 'extra' is not a finite number"
bad_ckpt u-int32 "u = f['checkpoint/u'][...]; del f['checkpoint/u']; f['checkpoint/u'] = u.astype(np.int32)" \
  "/checkpoint/u is not a floating-point dataset"
bad_ckpt u-nan "f['checkpoint/u'][299, 7] = np.nan" "/checkpoint/u holds nan"
bad_ckpt history-nan "r = f['history/residual'][...]; r[1] = np.nan; f['history/residual'][...] = r" \
  "/history/residual\\[1\\] = nan"
bad_ckpt history-int "r = f['history/residual'][...]; del f['history/residual']; f['history/residual'] = r.astype(np.int64)" \
  "/history/residual is not a 1-D dataset of floating-point numbers"
bad_ckpt history-2d "i = f['history/iteration'][...]; del f['history/iteration']; f['history/iteration'] = i.reshape(1, -1)" \
  "/history/iteration is not a 1-D dataset of integers"
# a history declared far longer than the file holds (2^27 entries, never
# written: a 534 KB file) is refused by its length before anything is read
bad_ckpt history-declared "del f['history']; g = f.create_group('history')
g.create_dataset('iteration', shape=(2**27,), dtype='i8', chunks=(4096,)); g.create_dataset('residual', shape=(2**27,), dtype='f8', chunks=(4096,))" \
  "/history holds 134217728 checks, more than this run keeps"
bad_ckpt history-length "r = f['history/residual'][...]; del f['history/residual']; f['history/residual'] = r[:-1]" \
  "/history/iteration has"
bad_ckpt history-past "i = f['history/iteration'][...]; i[-1] += 1000; f['history/iteration'][...] = i" \
  "expected checks in order"
bad_ckpt no-history "del f['history']" "no /history group"
bad_ckpt missing "del f['checkpoint/u']" "/checkpoint/u is not a floating-point dataset"

# run.on_signal = continue: SIGUSR1 through mpirun (it forwards USR1/USR2)
coop_mpirun 2 "$COOPSOLVE" --backend host $long --set solver.max_iter=60000 --set run.on_signal=continue \
  --set output.monitor_every=0 --output cont.h5 >cont.out 2>cont.err &
pid=$!
sleep 1.5
pkill -USR1 -f "^[^ ]*coopsolve .*--output cont.h5"
wait $pid || { cat cont.out cont.err; fail "on_signal = continue: exit status $?"; }
grep -q "SIGUSR1 at iteration .*going on" cont.err || { cat cont.err; fail "on_signal = continue: no checkpoint"; }
[ -f cont.ckpt.h5 ] && [ -f cont.h5 ] || fail "on_signal = continue: files missing"

# SIGKILL of one rank: the job ends within seconds, the last checkpoint opens
coop_mpirun 2 "$COOPSOLVE" --backend host $long --set output.checkpoint_every=200 \
  --set output.monitor_every=0 --output kill.h5 >kill.out 2>kill.err &
pid=$!
sleep 2
victim=$(pgrep -f "^[^ ]*coopsolve .*--output kill.h5" | tail -n 1)
kill -KILL "$victim" || fail "no rank to kill"
timeout 30 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.2; done" || fail "SIGKILL: mpirun still running after 30 s"
wait $pid && fail "SIGKILL: mpirun exit status 0"
$PY -c 'import h5py; f = h5py.File("kill.ckpt.h5"); assert f["checkpoint/u"].shape == (300, 300)' ||
  fail "SIGKILL: the last checkpoint does not open"
[ -z "$(ls -A | grep '^\.kill')" ] || echo "note: SIGKILL left $(ls -A | grep '^\.kill')"

# signals all through a run (writes included): no temporary left, output whole or old
big="$INPUTS/poisson2d.ini --set grid.nx=1500 --set grid.ny=1500 --set solver.name=jacobi --set solver.max_iter=400 --set solver.check_every=20 --set output.checkpoint_every=20"
for try in 1 2 3; do
  echo previous >storm.h5
  coop_mpirun 2 "$COOPSOLVE" --backend host $big --set output.monitor_every=0 --output storm.h5 >storm.out 2>storm.err &
  pid=$!
  # from the end of the set-up on (a signal before main() can only kill)
  timeout 30 sh -c 'until grep -q "^coopsolve: jacobi" storm.out; do sleep 0.05; done'
  sleep 0.$((try * 2))
  while kill -0 $pid 2>/dev/null; do
    pkill -USR2 -f "^[^ ]*coopsolve .*--output storm.h5"
    sleep 0.05
  done
  wait $pid
  rc=$?
  left=$(ls -A | grep '^\.storm' || true)
  [ -z "$left" ] || fail "signal storm: left $left"
  case $rc in
    0) $PY "$H5CHECK" show storm.h5 >/dev/null || fail "signal storm: output not whole" ;;
    3) [ "$(cat storm.h5)" = previous ] || fail "signal storm: previous output touched" ;;
    *) cat storm.err; fail "signal storm: exit status $rc" ;;
  esac
done

# bad restart files: exit 2 naming the file, before any work
mkfifo fifo.h5
what="restart from a missing file"
coop_expect_input_error "$TMP" 1 "missing.h5" "" $mat --restart missing.h5
what="restart from a FIFO"
coop_expect_input_error "$TMP" 1 "fifo.h5" "" $mat --restart fifo.h5
what="restart from an output file"
coop_expect_input_error "$TMP" 2 "--restart cg-full.h5: no /checkpoint group" "" $mat --set solver.name=cg --restart cg-full.h5
what="restart of another problem"
coop_expect_input_error "$TMP" 2 "--restart jac-cut.ckpt.h5: the checkpoint belongs to another problem" "grid.nx = 41" \
  $jac --set grid.nx=41 --restart jac-cut.ckpt.h5
# the output never replaces the checkpoint a run goes on from (a checkpoint may: chained jobs)
for n in 1 2; do
  cp jac-cut.ckpt.h5 keep.ckpt.h5
  ln -sf keep.ckpt.h5 link.h5
  what="output over the restart file, $n ranks"
  coop_expect_input_error "$TMP" $n "output.file = keep.ckpt.h5" "would replace keep.ckpt.h5, which this run reads" \
    $jac --restart keep.ckpt.h5 --output keep.ckpt.h5
  what="output over the restart file through a link, $n ranks"
  coop_expect_input_error "$TMP" $n "output.file = keep.ckpt.h5" "would replace link.h5, which this run reads" \
    $jac --restart link.h5 --output keep.ckpt.h5
  cmp -s jac-cut.ckpt.h5 keep.ckpt.h5 || fail "the restart file was changed"
done
# a scalar the method carries missing (a checkpoint of another version of it): exit 2 naming it
cp cg-cut.ckpt.h5 noscalar.ckpt.h5
$PY -c "import h5py; g = h5py.File('noscalar.ckpt.h5', 'r+')['checkpoint/scalars']; del g.attrs[sorted(g.attrs)[0]]" ||
  fail "cannot damage the cg checkpoint"
what="restart without a scalar"
coop_expect_input_error "$TMP" 2 "--restart noscalar.ckpt.h5: /checkpoint/scalars has no attribute" "" \
  $mat --set solver.name=cg --restart noscalar.ckpt.h5
what="restart with another solver"
coop_expect_input_error "$TMP" 1 "--restart cg-cut.ckpt.h5: a checkpoint of solver.name = cg, not pipecg" "" \
  $mat --set solver.name=pipecg --restart cg-cut.ckpt.h5

# ---- continuation: a run that stops at max_iter with checkpoints on writes a
# final checkpoint there (a multiple of output.checkpoint_every or not), and a
# restart with a larger max_iter ends with the bits of one run to the larger
# count. Each method, 1 and 2 ranks. No checkpoints asked for: none written.
ckpt_iteration() {
  $PY -c 'import h5py, sys; print(int(h5py.File(sys.argv[1], "r")["checkpoint"].attrs["iteration"]))' "$1"
}

# case NAME RANKS STOP EVERY MORE args...: to STOP with checkpoints every
# EVERY, then on to MORE from the final checkpoint, against one run to MORE
case_() {
  c=$1 n=$2 stop=$3 every=$4 more=$5
  shift 5
  run $c-part "$n" "$@" --set solver.max_iter=$stop --set output.checkpoint_every=$every
  [ -f $c-part.ckpt.h5 ] || fail "$c: no checkpoint at max_iter $stop (every $every)"
  got=$(ckpt_iteration $c-part.ckpt.h5) || fail "$c: unreadable checkpoint"
  [ "$got" = "$stop" ] || fail "$c: the last checkpoint is of iteration $got, not max_iter $stop"
  run $c-on "$n" "$@" --set solver.max_iter=$more --restart $c-part.ckpt.h5
  run $c-full "$n" "$@" --set solver.max_iter=$more
  same $c-full.h5 $c-on.h5
  echo "$c: final checkpoint at $stop (every $every), continued to $more: same bits"
}

cjac="$INPUTS/poisson2d.ini --set grid.nx=40 --set grid.ny=30 --set solver.name=jacobi --set solver.check_every=10 --set solver.rtol=0"
cmat="$INPUTS/matrix.ini --set problem.matrix=$DATA/nos6.mtx --set solver.rtol=0"
cgrd="$INPUTS/cg_poisson.ini --set problem.type=laplace --set grid.nx=30 --set grid.ny=20 --set solver.rtol=0"
heat="$INPUTS/heat.ini --set grid.nx=40 --set grid.ny=30 --set output.every=0"
for n in 1 2; do
  case_ jac-$n $n 200 70 300 $cjac
  case_ cg-$n $n 30 30 45 $cgrd --set solver.name=cg
  case_ cgsr-$n $n 30 25 45 $cmat --set solver.name=cg --set solver.cg_single_reduction=true
  case_ pipecg-$n $n 40 25 60 $cmat --set solver.name=pipecg
  case_ bicgstab-$n $n 20 15 30 $cgrd --set solver.name=bicgstab
  case_ heat-$n $n 90 40 150 $heat
done

# no checkpoints asked for: none written at max_iter
run plain 1 $cgrd --set solver.name=cg --set solver.max_iter=20
[ ! -e plain.ckpt.h5 ] || fail "a checkpoint was written without output.checkpoint_every"
echo "checkpoint: all cases passed"
