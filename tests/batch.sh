#!/bin/sh
# Batch runs ([batch] inputs) on the host backend:
#   - 1, 2 and 3 ranks give the same iterations, reasons and solutions (1e-12
#     relative) for jacobi, cg and cg + jacobi pc, generated 2D and 3D
#     problems and a list of Matrix Market files;
#   - the /batch layout (datasets, types, offsets, attributes);
#   - each generated problem is the one the README defines, rebuilt here from
#     (seed, i) with numpy: its residual is what the file says it is;
#   - b = A*1 matrix problems come out as x = 1, a given b file as its x;
#   - batch.matrix_list: the same batch under paths batch.matrices cannot
#     take (',', ':', '#', blanks, quotes) solves the same, its paths relative to
#     the list file wherever the run starts; each bad list is exit 2 with one
#     message naming LIST:LINE (or the key), and no output replaces the list or
#     a file it names;
#   - a larger shift converges faster; --dry-run writes nothing; a failing
#     rank stops all (status 1, one message, no file);
#   - SIGTERM: the problems solved so far are written, the others with reason
#     none, status 3; run.on_signal = continue solves them all;
#   - heat batches: with f = 0 and s = 0 each field is the discrete decay
#     (1 - dt alpha lambda_h)^steps of the sine mode (1e-12 relative, 2D and
#     3D), second order in h against exp(-alpha dim pi^2 t), solver.t_end ends
#     every problem there, a dt above the limit is exit 2 naming the largest
#     stable dt, and 1 and 2 ranks agree.
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
# an output never replaces one of batch.matrices' files (it did: exit 0, tri.mtx became HDF5)
cp "$TMP/tri.mtx" "$TMP/tri_keep.mtx"
what="output over a batch matrix"
coop_expect_input_error "$TMP" 2 "output.file = tri.mtx (from --set): tri.mtx would replace tri.mtx" "" m.ini \
  --set "batch.matrices=tri.mtx:tri_b.mtx, tri.mtx" --output tri.mtx
coop_expect_input_error "$TMP" 1 "output.file = tri_b.mtx (from --set): tri_b.mtx would replace tri_b.mtx" "" m.ini \
  --set "batch.matrices=tri.mtx:tri_b.mtx" --output tri_b.mtx
cmp -s "$TMP/tri.mtx" "$TMP/tri_keep.mtx" || fail "$what: tri.mtx changed"
# ---- batch.matrix_list: m.ini's batch under names batch.matrices cannot take
# (',', ':', '#', blanks, a quote, a backslash), relative to the list's folder ----
L=$TMP/lists W="$TMP/lists/d, x:y #z"
mkdir -p "$W" "$TMP/far"
cp "$DATA/nos6.mtx" "$W/nos6 copy.mtx"
cp "$DATA/494_bus.mtx" "$L/bus,1:#.mtx"
cp "$TMP/tri.mtx" "$W/tri \"q\".mtx"
cp "$TMP/tri_b.mtx" "$L/tri_b\\x#.mtx"
{
  printf '# m.ini'"'"'s batch; CRLF, blank and comment lines\r\n\r\n'
  printf '  "d, x:y #z/nos6 copy.mtx"\r\n'
  printf '%s\n' "$L/bus,1:#.mtx"
  printf '\t"d, x:y #z/tri \\"q\\".mtx"\t tri_b\\x#.mtx\n'
} >"$L/set.list"
ini ml '[batch]|matrix_list = lists/set.list|[solver]|name = cg|pc = jacobi|rtol = 1e-12|max_iter = 5000'
for n in 1 2; do
  run $n ml-$n ml.ini
  check same "$TMP/m-1.h5" "$TMP/ml-$n.h5"
done
# started from another folder: the list's paths stay relative to the list
(cd "$TMP/far" && coop_mpirun 2 "$COOPSOLVE" --backend host ../ml.ini --set batch.matrix_list=../lists/set.list \
  --output ml-far.h5 >"$TMP/far.out" 2>&1) || { cat "$TMP/far.out"; fail "matrix_list from another folder: exit $?"; }
check same "$TMP/m-1.h5" "$TMP/far/ml-far.h5"
# --dry-run reads the list too
(cd "$TMP" && coop_mpirun 2 "$COOPSOLVE" --backend host ml.ini --dry-run >"$TMP/mldry.out" 2>&1) ||
  { cat "$TMP/mldry.out"; fail "matrix_list dry run: exit $?"; }
grep -q '^# batch: 3 Matrix Market files' "$TMP/mldry.out" || { cat "$TMP/mldry.out"; fail "matrix_list dry run"; }

# each bad list is exit 2 with one message naming LIST:LINE (or the key), at 1 and 2 ranks
mkdir -p "$TMP/ml/sub"
ini mle '[batch]|matrix_list = set.list|[solver]|name = cg'
printf 'a.mtx\n\n"b c.mtx" b.mtx c.mtx\n' >"$TMP/ml/many.list"
printf '# open\n"b c.mtx b.mtx\n' >"$TMP/ml/open.list"
printf '# nothing\r\n\r\n  \t\n' >"$TMP/ml/empty.list"
printf '%s\nmissing.mtx\n' "$DATA/nos6.mtx" >"$TMP/ml/sub/lost.list"
# the right-hand side of line 2 is read by rank 1 (LPT gives nos6 to rank 0): still one message
printf '%s\n%s nob.mtx\n' "$DATA/nos6.mtx" "$DATA/LFAT5.mtx" >"$TMP/ml/sub/lostb.list"
for n in 1 2; do
  what="matrix_list: too many fields ($n ranks)"
  coop_expect_input_error "$TMP/ml" $n "many.list:3: too many fields" "" ../mle.ini --set batch.matrix_list=many.list
  what="matrix_list: unterminated quote ($n ranks)"
  coop_expect_input_error "$TMP/ml" $n "open.list:2: unterminated quote" "" ../mle.ini --set batch.matrix_list=open.list
  what="matrix_list: no problems ($n ranks)"
  coop_expect_input_error "$TMP/ml" $n "empty.list: no matrices" "" ../mle.ini --set batch.matrix_list=empty.list
  what="matrix_list: no list file ($n ranks)"
  coop_expect_input_error "$TMP/ml" $n \
    "--set batch.matrix_list=gone.list: cannot read the matrix list: No such file or directory" "" ../mle.ini \
    --set batch.matrix_list=gone.list
  what="matrix_list: a matrix that does not exist ($n ranks)"
  coop_expect_input_error "$TMP/ml" $n "sub/lost.list:2: sub/missing.mtx: cannot open" "" ../mle.ini \
    --set batch.matrix_list=sub/lost.list
  what="matrix_list: a right-hand side that does not exist ($n ranks)"
  coop_expect_input_error "$TMP/ml" $n "sub/lostb.list:2: sub/nob.mtx: cannot open" "" ../mle.ini \
    --set batch.matrix_list=sub/lostb.list
  what="matrix_list with batch.matrices ($n ranks)"
  coop_expect_input_error "$TMP/ml" $n \
    "batch.matrices (from --set) and batch.matrix_list (from ../mle.ini:2) both name the matrices" "" ../mle.ini \
    --set batch.matrices=a.mtx
done
what="matrix_list: a missing matrix, --dry-run"
coop_expect_input_error "$TMP/ml" 2 "sub/lost.list:2: sub/missing.mtx: cannot open" "" ../mle.ini \
  --set batch.matrix_list=sub/lost.list --dry-run
what="matrix_list with a generator key"
coop_expect_input_error "$TMP/ml" 2 "batch.count = 3 (from --set) applies to generated problems, not to batch.matrix_list" \
  "" ../mle.ini --set batch.count=3
what="matrix_list with heat"
coop_expect_input_error "$TMP/ml" 2 \
  "solver.name = heat (from --set) steps generated problems only: batch.matrix_list (from ../mle.ini:2)" "" \
  ../mle.ini --set solver.name=heat
# an output never replaces the list file, nor a file it names
cp "$L/set.list" "$TMP/set_keep.list"
for n in 1 2; do
  what="output over the matrix list ($n ranks)"
  coop_expect_input_error "$TMP" $n \
    "output.file = lists/set.list (from --set): lists/set.list would replace lists/set.list, which this run reads" \
    "" ml.ini --output lists/set.list
done
what="output over a matrix of the list"
coop_expect_input_error "$TMP" 2 \
  "output.file = lists/bus,1:#.mtx (from --set): lists/bus,1:#.mtx would replace $L/bus,1:#.mtx" "" \
  ml.ini --output 'lists/bus,1:#.mtx'
what="output over a right-hand side of the list"
coop_expect_input_error "$TMP" 1 "output.file = lists/tri_b\\x#.mtx (from --set): " "" ml.ini --output 'lists/tri_b\x#.mtx'
cmp -s "$L/set.list" "$TMP/set_keep.list" || fail "output over the matrix list: it changed"
cmp -s "$L/tri_b\\x#.mtx" "$TMP/tri_b.mtx" || fail "output over a right-hand side of the list: it changed"

# the project's own checker takes batch files (generated, from matrices, without solutions)
for name in sh nosol mj; do
  "$PY" "$H5CHECK" layout "$TMP/$name.h5" || fail "h5check layout $name.h5"
done

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
coop_sigterm $! sig.h5
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

# ---- heat batches (solver.name = heat): forward Euler from the lowest sine mode ----
cat >"$TMP/heat.py" <<'PYEOF'
import sys, math, h5py, numpy as np

def fail(msg):
    print("FAIL:", msg); sys.exit(1)

def batch(path):
    f = h5py.File(path, "r")
    b = f["batch"]
    if b.attrs["method"] != "heat" or f["solver"].attrs["solver"] != "heat": fail(f"{path}: not a heat run")
    for name in ("dt", "t_final"):
        if b[name].shape != (int(b.attrs["count"]),) or b[name].dtype != np.dtype("<f8"): fail(f"{path}: /batch/{name}")
    return b

def mode(n, dim):
    s = np.sin(np.pi * (np.arange(n) + 1) / (n + 1))
    u = s
    for _ in range(dim - 1): u = np.multiply.outer(s, u)
    return u.ravel()

def limit(n, dim, shift, alpha):
    return 2.0 / (alpha * (4.0 * dim * (n + 1) ** 2 + shift))

# decay PATH DIM ALPHA STEPS: f = 0, s = 0, dt = 0.9 of each limit: the field is
# (1 - dt alpha lambda_h)^steps times the initial mode (the discrete decay, exactly)
def decay(path, dim, alpha, steps):
    b = batch(path)
    off, x = b["offsets"][:], b["solution"][:]
    worst = 0.0
    for i in range(int(b.attrs["count"])):
        n, dt, k = int(b["side"][i]), b["dt"][i], int(b["iterations"][i])
        if k != steps or b["reason"][i] != 9: fail(f"problem {i}: {k} steps, reason {b['reason'][i]}")
        if dt != 0.9 * limit(n, dim, 0.0, alpha): fail(f"problem {i}: dt {dt}, not 0.9 of its limit")
        if b["t_final"][i] != k * dt: fail(f"problem {i}: t_final {b['t_final'][i]}, not steps * dt")
        h = 1.0 / (n + 1)
        lam = dim * 4.0 / h ** 2 * math.sin(math.pi * h / 2) ** 2
        want = (1.0 - dt * alpha * lam) ** k * mode(n, dim)
        u = x[off[i]:off[i + 1]]
        err = np.abs(u - want).max() / np.abs(want).max()
        worst = max(worst, err)
        if not err <= 1e-12: fail(f"problem {i} (n {n}): {err:.3g} from the discrete decay")
        # the reported residual is ||f - A u|| = lambda_h ||u|| of the final field
        if abs(b["residual"][i] - lam * np.linalg.norm(u)) > 1e-10 * b["residual"][i]: fail(f"problem {i}: residual")
    print(f"{path}: discrete decay to {worst:.2g} (relative, worst problem)")

# t_end PATH DIM ALPHA T: every problem ends at T, its dt at most 0.9 of its limit
# and its steps ceil(T / (0.9 limit)) (one more where T / k rounds above it)
def t_end(path, dim, alpha, T):
    b = batch(path)
    if b.attrs["t_end"] != T: fail(f"{path}: t_end attribute {b.attrs['t_end']}")
    for i in range(int(b.attrs["count"])):
        n, s, dt, k = int(b["side"][i]), b["shift"][i], b["dt"][i], int(b["iterations"][i])
        want = 0.9 * limit(n, dim, s, alpha)
        if abs(b["t_final"][i] - T) > 1e-14 * T: fail(f"problem {i}: ends at {b['t_final'][i]}, not {T}")
        if dt > want or k not in (math.ceil(T / want), math.ceil(T / want) + 1) or b["reason"][i] != 9:
            fail(f"problem {i}: {k} steps of {dt} (0.9 of the limit: {want})")
    ks = b["iterations"][:]
    if ks.min() == ks.max(): fail(f"{path}: every problem took the same steps")
    print(f"{path}: all end at {T}, steps {ks.min()} .. {ks.max()}")

# order DIM ALPHA T PATH...: against exp(-alpha dim pi^2 t) times the mode, the
# error falls at second order in h (dt = 0.9 of the limit, tied to h^2)
def order(dim, alpha, T, paths):
    hs, errs = [], []
    for p in paths:
        b = batch(p)
        n = int(b["side"][0])
        u = b["solution"][b["offsets"][0]:b["offsets"][1]]
        if abs(b["t_final"][0] - T) > 1e-14 * T: fail(f"{p}: ends at {b['t_final'][0]}")
        exact = math.exp(-alpha * dim * math.pi ** 2 * T) * mode(n, dim)
        hs.append(1.0 / (n + 1)); errs.append(np.abs(u - exact).max())
    for (h0, e0), (h1, e1) in zip(zip(hs, errs), zip(hs[1:], errs[1:])):
        q = math.log(e0 / e1) / math.log(h0 / h1)
        print(f"heat batch {dim}D: h {h0:.4g} -> {h1:.4g}: max error {e0:.3e} -> {e1:.3e}, order {q:.3f}")
        if not 1.8 <= q <= 2.2: fail(f"order {q:.3f} is not 2")

# same P1 P2: dt and t_final agree too (the rest: check.py same)
def same(p1, p2):
    a, b = batch(p1), batch(p2)
    for name in ("dt", "t_final", "iterations"):
        if not np.array_equal(a[name][:], b[name][:]): fail(f"{p1} and {p2} differ in {name}")

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "decay": decay(args[0], int(args[1]), float(args[2]), int(args[3]))
elif cmd == "t_end": t_end(args[0], int(args[1]), float(args[2]), float(args[3]))
elif cmd == "order": order(int(args[0]), float(args[1]), float(args[2]), args[3:])
elif cmd == "same": same(args[0], args[1])
PYEOF
heat() { "$PY" "$TMP/heat.py" "$@" || fail "heat $*"; }

# a pure decay (f = 0, s = 0), uneven sizes, 2D and 3D, alpha = 0.5; 1 and 2 ranks
ini hd2 '[batch]|count = 12|sizes = loguniform:3:40|rhs = zero|seed = 6|[solver]|name = heat|alpha = 0.5|max_iter = 150'
ini hd3 '[batch]|count = 8|dim = 3|sizes = uniform:2:10|rhs = zero|seed = 2|[solver]|name = heat|max_iter = 90'
for c in hd2 hd3; do
  for n in 1 2; do run $n $c-$n $c.ini; done
  check same "$TMP/$c-1.h5" "$TMP/$c-2.h5"
  heat same "$TMP/$c-1.h5" "$TMP/$c-2.h5"
done
heat decay "$TMP/hd2-2.h5" 2 0.5 150
heat decay "$TMP/hd3-1.h5" 3 1 90
"$PY" -c "import h5py,sys; r=h5py.File(sys.argv[1])['batch/rank'][:]; sys.exit(0 if set(r)=={0,1} else 1)" \
  "$TMP/hd2-2.h5" || fail "hd2 at 2 ranks: not both ranks stepped problems"
grep -q '^  heat        dt ' "$TMP/hd2-1.out" || { cat "$TMP/hd2-1.out"; fail "heat: no dt line in the summary"; }

# solver.t_end: shifts and a source, every problem ends at t_end with its own steps; 1 and 2 ranks
ini ht '[batch]|count = 10|sizes = loguniform:3:50|shift = uniform:0:100|rhs = random|seed = 8|[solver]|name = heat|t_end = 0.02'
for n in 1 2; do run $n ht-$n ht.ini; done
check same "$TMP/ht-1.h5" "$TMP/ht-2.h5"
heat same "$TMP/ht-1.h5" "$TMP/ht-2.h5"
heat t_end "$TMP/ht-2.h5" 2 1 0.02

# second order against the continuous decay exp(-alpha dim pi^2 t), dt tied to h^2
for n in 15 31 63; do
  ini ho$n "[batch]|sizes = uniform:$n|rhs = zero|[solver]|name = heat|t_end = 0.03125"
  run 1 ho$n ho$n.ini
done
heat order 2 1 0.03125 "$TMP/ho15.h5" "$TMP/ho31.h5" "$TMP/ho63.h5"

# solver.dt above the smallest limit (side 31: 2 / (8 * 32^2) = 0.000244140625): exit 2
# naming the key and the largest stable dt, no output; the limit itself runs
mkdir "$TMP/hdt"
what="heat batch: dt above the limit"
coop_expect_input_error "$TMP/hdt" 2 "--set solver.dt=0.001: above the explicit stability limit 0.000244140625" \
  "use solver.dt <= 0.000244140625" "$TMP/ho31.ini" --set solver.dt=0.001 --set batch.count=3 --output out.h5
what="heat batch: dt above the limit, --dry-run"
coop_expect_input_error "$TMP/hdt" 1 "--set solver.dt=0.001: above the explicit stability limit 0.000244140625" \
  "" "$TMP/ho31.ini" --set solver.dt=0.001 --dry-run
run 2 hlim ho31.ini --set solver.dt=0.000244140625 --set batch.count=3

# ---- the example input runs (smaller, same keys) ----
run 2 example "$COOP_SRCDIR/inputs/batch.ini" --set batch.count=16
exit 0
