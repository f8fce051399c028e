#!/bin/sh
# Batch runs ([batch] inputs) on the host backend:
#   - 1, 2 and 3 ranks give the same iterations, reasons and solutions (1e-12
#     relative) for jacobi, cg and cg + jacobi pc, generated 2D and 3D
#     problems and a list of Matrix Market files;
#   - the /batch layout (datasets, types, offsets, attributes);
#   - each generated problem is the one the README defines, rebuilt here from
#     (seed, i) with numpy: its residual is what the file says it is;
#   - b = A*1 matrix problems come out as x = 1, a given b file as its x;
#   - a larger shift converges faster; --dry-run writes nothing; a failing
#     rank stops all (status 1, one message, no file);
#   - SIGTERM: the problems solved so far are written, the others with reason
#     none, status 3; run.on_signal = continue solves them all.
. "$COOP_SRCDIR/tests/common.sh"
coop_tmpdir
coop_python
DATA=$COOP_SRCDIR/tests/data

# run RANKS NAME INI [ARG...]: a run in $TMP writing $TMP/NAME.h5.
run() {
  n=$1 name=$2 ini=$3
  shift 3
  (cd "$TMP" && coop_mpirun "$n" "$COOPSOLVE" --backend host "$ini" --output "$name.h5" "$@" \
    >"$TMP/$name.out" 2>"$TMP/$name.err") || { cat "$TMP/$name.out" "$TMP/$name.err"; fail "$name: exit status $?"; }
  grep -q "^coopsolve: batch of" "$TMP/$name.out" || { cat "$TMP/$name.out"; fail "$name: no summary"; }
}

# ini NAME LINES: write $TMP/NAME.ini, '|' between lines.
ini() { printf '%s\n' "$2" | tr '|' '\n' >"$TMP/$1.ini"; }

cat >"$TMP/check.py" <<'EOF'
import sys, h5py, numpy as np

M64 = (1 << 64) - 1
def mix(z):
    z = (z + 0x9e3779b97f4a7c15) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)
def key(seed, i, stream): return mix((mix((mix(seed) + i) & M64) + stream) & M64)

def fail(msg):
    print("FAIL:", msg); sys.exit(1)

def layout(path):
    f = h5py.File(path, "r")
    b = f["batch"]
    B = int(b.attrs["count"])
    for name, kind, n in [("iterations", "i8", B), ("residual", "f8", B), ("r0", "f8", B), ("reason", "i4", B),
                          ("seconds", "f8", B), ("rows", "i8", B), ("rank", "i4", B), ("offsets", "i8", B + 1)]:
        d = b[name]
        if d.shape != (n,) or d.dtype != np.dtype("<" + kind): fail(f"{path}: /batch/{name} is {d.shape} {d.dtype}")
    off, rows = b["offsets"][:], b["rows"][:]
    if off[0] != 0 or not np.array_equal(np.diff(off), rows) or off[-1] != b.attrs["rows"]: fail(f"{path}: offsets")
    if "solution" in b and b["solution"].shape != (off[-1],): fail(f"{path}: solution shape")
    for a in ("sync", "schedule", "group_blocks", "groups", "method", "pc", "seed", "sync_used", "source"):
        if a not in b.attrs: fail(f"{path}: /batch has no attribute {a}")
    if "1 converged_rtol" not in b["reason"].attrs["codes"]: fail(f"{path}: reason codes")
    if "grid" in f or "fields" in f: fail(f"{path}: a batch file with /grid or /fields")
    if not np.all(b["seconds"][:] >= 0): fail(f"{path}: negative seconds")
    return f, b

def same(p1, p2):
    _, a = layout(p1)
    _, b = layout(p2)
    for name in ("iterations", "reason", "rows", "offsets"):
        if not np.array_equal(a[name][:], b[name][:]): fail(f"{p1} and {p2} differ in {name}")
    x, y = a["solution"][:], b["solution"][:]
    if np.abs(x - y).max() > 1e-12 * max(1.0, np.abs(x).max()): fail(f"{p1} and {p2}: solutions differ")
    if not np.allclose(a["residual"][:], b["residual"][:], rtol=1e-12, atol=0): fail(f"{p1}, {p2}: residuals")

def poisson(n, dim, s):
    one = np.diag(2.0 * np.ones(n)) - np.diag(np.ones(n - 1), 1) - np.diag(np.ones(n - 1), -1)
    eye = np.eye(n)
    A = np.kron(eye, one) + np.kron(one, eye) if dim == 2 else \
        np.kron(np.kron(eye, eye), one) + np.kron(np.kron(eye, one), eye) + np.kron(np.kron(one, eye), eye)
    return A * (n + 1) ** 2 + s * np.eye(n ** dim)

def generated(path, dim, seed, rhs, method, rtol):
    f, b = layout(path)
    off, side, shift = b["offsets"][:], b["side"][:], b["shift"][:]
    for i in range(int(b.attrs["count"])):
        n = int(side[i])
        if n ** dim != b["rows"][i]: fail(f"problem {i}: {b['rows'][i]} rows, side {n}")
        A = poisson(n, dim, shift[i])
        if rhs == "ones": f_ = np.ones(n ** dim)
        else:
            k = key(seed, i, 3)
            f_ = np.array([2.0 * ((mix((k + j) & M64) >> 11) * 2.0 ** -53) - 1.0 for j in range(n ** dim)])
        x = b["solution"][off[i]:off[i + 1]]
        r0, res, true = b["r0"][i], b["residual"][i], np.linalg.norm(f_ - A @ x)
        if abs(r0 - np.linalg.norm(f_)) > 1e-12 * r0: fail(f"problem {i}: r0 {r0}, ||b|| {np.linalg.norm(f_)}")
        if b["reason"][i] != 1: fail(f"problem {i}: reason {b['reason'][i]}")
        if method == "jacobi" and abs(true - res) > 1e-6 * res: fail(f"problem {i}: residual {res}, true {true}")
        if method == "cg" and true > 100 * rtol * r0: fail(f"problem {i}: true residual {true} of {r0}")

def ones(path, expect):
    _, b = layout(path)
    off, x = b["offsets"][:], b["solution"][:]
    for i, want in enumerate(expect):
        xi = x[off[i]:off[i + 1]]
        want = np.ones_like(xi) if want is None else np.array(want, dtype=float)
        if np.abs(xi - want).max() > 1e-6: fail(f"{path}: problem {i}: |x - x*| = {np.abs(xi - want).max()}")

def shifts(path):
    _, b = layout(path)
    it, s = b["iterations"][:].astype(float), b["shift"][:]
    if np.corrcoef(it, s)[0, 1] > -0.5: fail(f"{path}: iterations do not fall as the shift grows")
    if it[np.argmax(s)] >= it[np.argmin(s)]: fail(f"{path}: the largest shift is not faster")

def absent(path, name):
    if name in h5py.File(path, "r")["batch"]: fail(f"{path}: /batch/{name} written")

cmd = sys.argv[1]
if cmd == "same": same(sys.argv[2], sys.argv[3])
elif cmd == "generated": generated(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], float(sys.argv[7]))
elif cmd == "ones": ones(sys.argv[2], [None, None, [1, 2, 3, 4, 5]])
elif cmd == "shifts": shifts(sys.argv[2])
elif cmd == "absent": absent(sys.argv[2], sys.argv[3])
EOF
check() { "$PY" "$TMP/check.py" "$@" || fail "check $*"; }

# ---- generated problems at 1, 2 and 3 ranks ----
ini j2 '[batch]|count = 20|sizes = loguniform:3:24|shift = uniform:0:300|rhs = random|seed = 5|[solver]|name = jacobi|rtol = 1e-8|max_iter = 100000'
ini c2 '[batch]|count = 20|sizes = loguniform:3:40|shift = loguniform:0.1:1000|rhs = ones|seed = 9|[solver]|name = cg|rtol = 1e-10'
ini p3 '[batch]|count = 16|dim = 3|sizes = uniform:2:11|shift = uniform:0:50|rhs = random|seed = 3|[solver]|name = cg|pc = jacobi|rtol = 1e-10'
for c in j2 c2 p3; do
  for n in 1 2; do run $n $c-$n $c.ini; done
  check same "$TMP/$c-1.h5" "$TMP/$c-2.h5"
done
run 3 p3-3 p3.ini
check same "$TMP/p3-1.h5" "$TMP/p3-3.h5"
check generated "$TMP/j2-2.h5" 2 5 random jacobi 1e-8
check generated "$TMP/c2-1.h5" 2 9 ones cg 1e-10
check generated "$TMP/p3-3.h5" 3 3 random cg 1e-10
# the ranks shared the work: both solved problems
"$PY" -c "import h5py,sys; r=h5py.File(sys.argv[1])['batch/rank'][:]; sys.exit(0 if set(r)=={0,1} else 1)" \
  "$TMP/c2-2.h5" || fail "c2 at 2 ranks: not both ranks solved problems"

# ---- a list of Matrix Market files, one with its own b ----
printf '%%%%MatrixMarket matrix coordinate real symmetric\n5 5 9\n' >"$TMP/tri.mtx"
for i in 1 2 3 4 5; do printf '%d %d 4\n' $i $i >>"$TMP/tri.mtx"; done
for i in 1 2 3 4; do printf '%d %d -1\n' $((i + 1)) $i >>"$TMP/tri.mtx"; done
# b = A (1, 2, 3, 4, 5)
printf '%%%%MatrixMarket matrix array real general\n5 1\n2\n4\n6\n8\n16\n' >"$TMP/tri_b.mtx"
ini m "[batch]|matrices = $DATA/nos6.mtx, $DATA/494_bus.mtx,tri.mtx:tri_b.mtx|[solver]|name = cg|pc = jacobi|rtol = 1e-12|max_iter = 5000"
for n in 1 2 3; do run $n m-$n m.ini; done
check same "$TMP/m-1.h5" "$TMP/m-2.h5"
check same "$TMP/m-1.h5" "$TMP/m-3.h5"
check ones "$TMP/m-2.h5"
run 2 mj m.ini --set solver.name=jacobi --set solver.pc=none --set "batch.matrices=tri.mtx:tri_b.mtx, tri.mtx" \
  --set solver.rtol=1e-13
"$PY" -c "
import h5py,numpy as np,sys; b=h5py.File(sys.argv[1])['batch']; x=b['solution'][:]
sys.exit(0 if np.abs(x-[1,2,3,4,5,1,1,1,1,1]).max()<1e-10 and b.attrs['source']=='matrices' and b.attrs['method']=='jacobi' else 1)" \
  "$TMP/mj.h5" || fail "jacobi on the matrix list"

# ---- a larger shift converges faster (the same size everywhere) ----
ini sh '[batch]|count = 12|sizes = uniform:20|shift = uniform:0:5000|[solver]|name = jacobi|rtol = 1e-6|max_iter = 100000'
run 2 sh sh.ini
check shifts "$TMP/sh.h5"
run 1 nosol sh.ini --set output.fields=false
check absent "$TMP/nosol.h5" solution

# ---- --dry-run: the plan, no file ----
(cd "$TMP" && coop_mpirun 2 "$COOPSOLVE" --backend host c2.ini --output dry.h5 --dry-run >"$TMP/dry.out" 2>&1) ||
  { cat "$TMP/dry.out"; fail "dry run: exit status $?"; }
for want in '# batch: 20 generated 2D problems' '# rows per problem: min' '#   rank 1: ' '# memory on rank 0' \
  '# solver: cg; backend: host'; do
  grep -qF "$want" "$TMP/dry.out" || { cat "$TMP/dry.out"; fail "dry run: no '$want'"; }
done
[ ! -e "$TMP/dry.h5" ] || fail "dry run wrote its output"
# its resolved configuration is a batch input again: the same problems and answers
sed -n '2,/^# batch:/p' "$TMP/dry.out" | grep -v '^# batch:' >"$TMP/back.ini"
run 2 back back.ini
check same "$TMP/c2-2.h5" "$TMP/back.h5"

# ---- a rank that fails in the solve stops every rank ----
(cd "$TMP" && COOP_FAULT=solve:1 coop_mpirun 2 "$COOPSOLVE" --backend host c2.ini --output f.h5 \
  >"$TMP/f.out" 2>"$TMP/f.err")
rc=$?
[ $rc -eq 1 ] || { cat "$TMP/f.out" "$TMP/f.err"; fail "fault in the solve: exit status $rc, not 1"; }
[ "$(grep -c '^coopsolve:' "$TMP/f.err")" = 1 ] || { cat "$TMP/f.err"; fail "fault: not one message"; }
grep -q '^coopsolve: rank 1: .*fault injected' "$TMP/f.err" || { cat "$TMP/f.err"; fail "fault: message"; }
[ ! -e "$TMP/f.h5" ] || fail "fault: an output file was written"

# ---- SIGTERM (scancel, a time limit): the solved problems are kept, the
# others have reason none, status 3; run.on_signal = continue finishes all ----
ini long '[batch]|count = 60|sizes = uniform:250:350|shift = uniform:0:1|seed = 3|[solver]|name = cg|rtol = 1e-10|max_iter = 100000'
(cd "$TMP" && coop_mpirun 2 "$COOPSOLVE" --backend host long.ini --output sig.h5 --set output.monitor_every=0 \
  >"$TMP/sig.out" 2>"$TMP/sig.err") &
pid=$!
sleep 2
pkill -TERM -f "^[^ ]*coopsolve .*--output sig.h5" || fail "SIGTERM: no ranks to signal"
timeout 60 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.2; done" || fail "SIGTERM: the run did not stop"
wait $pid
rc=$?
[ $rc -eq 3 ] || { cat "$TMP/sig.out" "$TMP/sig.err"; fail "SIGTERM: exit status $rc, not 3"; }
grep -q "^coopsolve: stopped by SIGTERM: [0-9]* of 60 problems solved" "$TMP/sig.out" ||
  { cat "$TMP/sig.out"; fail "SIGTERM: no message"; }
$PY - "$TMP/sig.h5" <<'EOF' || fail "SIGTERM: the output is not what was solved"
import sys, h5py, numpy as np
b = h5py.File(sys.argv[1])["batch"]
r, it, res, r0 = b["reason"][:], b["iterations"][:], b["residual"][:], b["r0"][:]
off, x = b["offsets"][:], b["solution"][:]
left = r == 0
assert left.any(), "every problem was solved before the signal"
assert (it[left] == 0).all() and np.isnan(res[left]).all(), "an unsolved problem has results"
assert (r[~left] == 1).all() and (res[~left] <= 1e-10 * r0[~left]).all(), "a solved problem is not converged"
for i in np.nonzero(left)[0]:
    assert not x[off[i]:off[i + 1]].any(), f"problem {i}: not its initial guess"
print(f"SIGTERM: {int((~left).sum())} solved, {int(left.sum())} left")
EOF
# long enough (a few seconds) that the signal lands inside the solve
ini cont '[batch]|count = 30|sizes = uniform:250:350|shift = uniform:0:1|seed = 3|[solver]|name = cg|rtol = 1e-10|[run]|on_signal = continue'
(cd "$TMP" && coop_mpirun 2 "$COOPSOLVE" --backend host cont.ini --output cont.h5 --set output.monitor_every=0 \
  >"$TMP/cont.out" 2>"$TMP/cont.err") &
pid=$!
sleep 2
signalled=0
pkill -USR1 -f "^[^ ]*coopsolve .*--output cont.h5" && signalled=1
wait $pid || { cat "$TMP/cont.out" "$TMP/cont.err"; fail "on_signal = continue: exit status $?"; }
$PY -c 'import h5py, sys; sys.exit(0 if (h5py.File(sys.argv[1])["batch"]["reason"][:] == 1).all() else 1)' \
  "$TMP/cont.h5" || fail "on_signal = continue: not every problem solved"
[ $signalled = 0 ] || grep -q "SIGUSR1 during the solve; every problem was solved" "$TMP/cont.err" ||
  { cat "$TMP/cont.err"; fail "on_signal = continue: no note of the signal"; }

# ---- the example input runs (smaller, same keys) ----
run 2 example "$COOP_SRCDIR/inputs/batch.ini" --set batch.count=16
exit 0
