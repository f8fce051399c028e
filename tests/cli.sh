#!/bin/sh
# The command line as a user meets it: --help (usage and every key of the
# table but [tune]), --help-all (every key), --version, --dry-run (resolved
# configuration with origins, which is itself a valid input; decomposition;
# memory), --set later-wins, --output, the key reference docs/keys.md (as
# --help-keys=markdown writes it), and good tiny runs at 1 and 2 ranks that
# leave .h5 and .xmf but no .tmp.
. "$COOP_SRCDIR/tests/common.sh"
coop_tmpdir
TINY="$COOP_SRCDIR/tests/data/good_tiny.ini"

# run RANKS DIR ARG...: run coopsolve in $TMP/DIR (made if need be, with
# good_tiny.ini copied in as in.ini); stdout in $TMP/DIR.out, stderr in
# $TMP/DIR.err; fail unless status 0 with no message on stderr.
run() {
  n=$1 dir=$TMP/$2
  shift 2
  mkdir -p "$dir" && cp "$TINY" "$dir/in.ini" || fail "cannot make $dir"
  (cd "$dir" && coop_mpirun "$n" "$COOPSOLVE" "$@" >"$dir.out" 2>"$dir.err")
  rc=$?
  [ $rc -eq 0 ] || { cat "$dir.out" "$dir.err"; fail "$n ranks, '$*': exit status $rc"; }
  ! grep '^coopsolve:' "$dir.err" || fail "$n ranks, '$*': message on stderr"
}

# once FILE REGEX...: each extended REGEX matches exactly one line of FILE.
once() {
  f=$1
  shift
  for re in "$@"; do
    c=$(grep -cE -e "$re" "$f")
    [ "$c" = 1 ] || { cat "$f"; fail "$f: $c lines match '$re', not 1"; }
  done
}

# only DIR NAME...: DIR holds exactly the NAMEs (in ls order).
only() {
  d=$1
  shift
  [ "$(cd "$d" && ls -A | tr '\n' ' ')" = "$* " ] || { ls -lA "$d"; fail "$d does not hold just '$*'"; }
}

# The resolved configuration of a dry run's output: from its own header line up
# to the decomposition.
resolved() {
  sed -n '/^# coopsolve resolved configuration/,/^# decomposition:/p' "$1" | sed '$d'
}

# ---- --help: usage and the key reference, on stdout, once at 2 ranks
run 2 help --help
once "$TMP/help.out" '^usage: coopsolve \[options\] INPUT$' '^  --set SECTION\.KEY=VALUE' \
  '^  --dry-run ' '^  --output FILE ' '^  --help-all ' '^exit status: 0 success, 1 run-time failure, 2 bad' '^signal after a checkpoint, 4 not converged'
! grep -q 'usage' "$TMP/help.err" || fail "--help wrote its usage to stderr"
awk '/^  [a-z_]+\.[a-z_]+ / { print $1 }' "$TMP/help.out" >"$TMP/help.keys"
for k in grid.dim grid.nx grid.nz grid.ghost problem.type solver.rtol solver.max_iter \
  solver.precision run.backend run.sync run.device output.file output.xdmf batch.sync batch.schedule; do
  grep -qx "$k" "$TMP/help.keys" || fail "--help does not list $k"
done
[ -z "$(sort "$TMP/help.keys" | uniq -d)" ] || fail "--help lists keys twice"
# each key once, with its type and default (the table's own words)
once "$TMP/help.out" '^  grid\.nx +int \[1, 1099511627776\] +default 64$' \
  '^  solver\.rtol +real \[0, 1\) +default 1e-6$' '^  run\.sync +auto\|grid\|launch\|graph +default auto$' \
  '^  batch\.sync +auto\|row\|cluster\|block\|grid\|launch\|launch_each +default auto$' \
  '^  output\.xdmf +bool +default true$' '^\[tune\]: keys that pick kernel internals .*--help-all'
# the [tune] keys (kernel internals) are --help-all's alone, after every other key
! grep -q '^tune\.' "$TMP/help.keys" || fail "--help lists [tune] keys"
run 1 helpall --help-all
awk '/^  [a-z_]+\.[a-z_]+ / { print $1 }' "$TMP/helpall.out" >"$TMP/helpall.keys"
grep -v '^tune\.' "$TMP/helpall.keys" | cmp -s - "$TMP/help.keys" ||
  { diff "$TMP/help.keys" "$TMP/helpall.keys"; fail "--help-all and --help differ in keys outside [tune]"; }
for k in tune.blocks tune.overlap tune.halo tune.fused_halo tune.resident tune.resident_depth tune.fuse_sweeps \
  tune.csr_schedule tune.group_blocks; do
  grep -qx "$k" "$TMP/helpall.keys" || fail "--help-all does not list $k"
done
[ "$(tail -n 1 "$TMP/helpall.keys" | cut -d. -f1)" = tune ] || fail "--help-all: [tune] is not the last section"
once "$TMP/helpall.out" '^\[tune\]$' '^  tune\.resident +bool +default true$'
! grep -q -- '--help-all lists them' "$TMP/helpall.out" || fail "--help-all points at itself"

# ---- --version
run 2 version --version
v=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$COOP_BUILDDIR/coop_build.h")
[ -n "$v" ] || fail "no PACKAGE_VERSION in $COOP_BUILDDIR/coop_build.h"
[ "$(head -n 1 "$TMP/version.out")" = "coopsolve $v" ] ||
  { cat "$TMP/version.out"; fail "--version does not start with 'coopsolve $v'"; }
once "$TMP/version.out" "^coopsolve " '^CUDA: ' '^HDF5: '

# ---- --dry-run at 2 ranks: origins, later --set wins, decomposition, memory
run 2 dry --backend host --dry-run in.ini --set solver.max_iter=7 --set output.xdmf=false \
  --set solver.max_iter=9
only "$TMP/dry" in.ini
d=$TMP/dry.out
once "$d" '^# coopsolve resolved configuration' \
  '^nx = 16 +# in\.ini:4$' '^ny = 12 +# in\.ini:5$' '^lx = 0\.10000000000000001 +# in\.ini:6$' \
  '^# nz = 64 +# default; only used when grid\.dim = 3$' '^ghost = 1 +# default$' \
  '^type = sine +# in\.ini:9$' '^mode = 1 +# default$' \
  '^rtol = 9\.9999999999999995e-08 +# in\.ini:12$' '^max_iter = 9 +# --set$' \
  '^backend = host +# --set$' '^file = "tiny\.h5" +# in\.ini:17$' '^xdmf = false +# --set$' \
  '^# decomposition: 2 ranks: 2 along x' \
  '^#   rank 0: 8 x 12 points from \(0, 0\)$' '^#   rank 1: 8 x 12 points from \(8, 0\)$' \
  '^# memory on rank 0: 2\.0[0-9]* MiB host at its peak \(output\), 0\.000 MiB device$' \
  '^# memory per rank at most: 2\.0[0-9]* MiB host \(rank [01]\), 0\.000 MiB device; this node allows '
! grep -q 'max_iter = 7' "$d" || fail "--dry-run shows the first of two --set"
# every key of the --help-all table is in the resolved configuration, and no other
# (a section the input's kind does not take is there as comments: [batch] here)
resolved "$d" | awk '/^(# )?\[[a-z_]+\]/ { match($0, /\[[a-z_]+\]/); s = substr($0, RSTART + 1, RLENGTH - 2) }
  /^(# )?[a-z_]+ = / { sub(/^# /, ""); print s "." $1 }' | sort >"$TMP/dry.keys"
sort "$TMP/helpall.keys" >"$TMP/help.sorted"
cmp -s "$TMP/help.sorted" "$TMP/dry.keys" ||
  { diff "$TMP/help.sorted" "$TMP/dry.keys"; fail "--help-all and --dry-run list different keys"; }

# --output and --set output.file: the later wins
run 1 out1 --backend host --dry-run in.ini --set output.file=a.h5 --output b.h5
once "$TMP/out1.out" '^file = "b\.h5" +# --set$'
run 1 out2 --backend host --dry-run in.ini --output b.h5 --set output.file=a.h5
once "$TMP/out2.out" '^file = "a\.h5" +# --set$'

# ---- the resolved configuration is an input that resolves to the same values,
# each now from its own line of that file (2D and 3D)
for dim in 2 3; do
  run 2 rt$dim --backend host --dry-run in.ini --set grid.dim=$dim \
    $([ $dim = 3 ] && echo --set grid.nz=6) --set solver.atol=1e-12
  resolved "$TMP/rt$dim.out" >"$TMP/rt$dim.ini"
  grep -q '^\[grid\]$' "$TMP/rt$dim.ini" || fail "no resolved configuration in the ${dim}D dry run"
  run 2 rt${dim}b --dry-run ../rt$dim.ini
  resolved "$TMP/rt${dim}b.out" >"$TMP/rt${dim}b.ini"
  for f in rt$dim rt${dim}b; do grep -v '^#' "$TMP/$f.ini" | sed 's/ *#.*$//' >"$TMP/$f.val"; done
  cmp -s "$TMP/rt$dim.val" "$TMP/rt${dim}b.val" ||
    { diff "$TMP/rt$dim.val" "$TMP/rt${dim}b.val"; fail "${dim}D: the resolved input resolves differently"; }
  awk -v f="../rt$dim.ini" '!/^#/ && / = / && $NF != f ":" NR { print; bad = 1 } END { exit bad }' \
    "$TMP/rt${dim}b.ini" || fail "${dim}D: a value of the resolved input is not from its own line"
done
once "$TMP/rt3.val" '^nz = 6$' '^lz = 1$'
once "$TMP/rt2b.out" '^# decomposition: 2 ranks: 2 along x'

# ---- good tiny runs: summary once, .h5 and .xmf, no .tmp; --output wins over
# the file's output.file
run 1 run1 --backend host in.ini
only "$TMP/run1" in.ini tiny.h5 tiny.xmf
mkdir -p "$TMP/run2/sub" || fail "cannot make $TMP/run2/sub"
run 2 run2 --backend host in.ini --output sub/two.h5
only "$TMP/run2" in.ini sub
only "$TMP/run2/sub" two.h5 two.xmf
for n in 1 2; do
  o=$TMP/run$n.out
  if [ $n = 1 ]; then h5=run1/tiny.h5; else h5=run2/sub/two.h5; fi
  once "$o" "^coopsolve: jacobi, 2D 16 x 12, fp64, $n ranks?, backend host" '^  reason      diverged_its$' \
    '^  iterations  10$' "^  output      ${h5#*/}\$"
  ! grep -q '^  iter ' "$o" || fail "$n ranks: monitor lines with output.monitor_every = 0"
  [ "$(head -c 4 "$TMP/$h5" | tail -c 3)" = HDF ] || fail "$n ranks: $h5 is not an HDF5 file"
done

# the key reference docs/keys.md is what --help-keys=markdown writes from the
# key table (make keys-md rewrites it), a row "| `s.k` |" for every key
"$COOPSOLVE" --help-keys=markdown >"$TMP/keys.md" 2>"$TMP/keys.err" || { cat "$TMP/keys.err"; fail "--help-keys=markdown"; }
cmp -s "$TMP/keys.md" "$COOP_SRCDIR/docs/keys.md" ||
  { diff "$COOP_SRCDIR/docs/keys.md" "$TMP/keys.md"; fail "docs/keys.md is not current: make keys-md rewrites it"; }
for k in $(cat "$TMP/helpall.keys"); do
  grep -qF "| \`$k\` |" "$TMP/keys.md" || fail "docs/keys.md: key $k missing from the key reference"
done
# ... and the names of earlier versions, each with the key it is now
for k in run.blocks run.resident run.halo run.group_blocks run.schedule run.sync; do
  grep -qE "^\| \`$k\`.* \| .*(tune|batch)\.[a-z_]+" "$TMP/keys.md" || fail "docs/keys.md: moved key $k not listed"
done

# every example input is a run that starts: its dry run passes at 2 ranks
# (the matrix example names a matrix of the tests)
for f in "$INPUTS"/*.ini; do
  extra= ranks=2
  case $f in */matrix.ini) extra="--set problem.matrix=$COOP_SRCDIR/tests/data/nos6.mtx" ;; esac
  coop_mpirun $ranks "$COOPSOLVE" --backend host "$f" $extra --dry-run >"$TMP/dry.out" 2>&1 ||
    { cat "$TMP/dry.out"; fail "$f: its dry run fails"; }
done

# the monitor: auto gives about 20 lines a solve (CG on nos6: every iteration
# where the residual moved another twentieth of the way to rtol), the first
# and last check among them; heat lines carry the simulated time t; matrix
# throughput in rows; every N prints each N-th iteration
mon() { # NAME RANKS ARG...: lines of the monitor into $TMP/NAME.mon
  name=$1 n=$2
  shift 2
  coop_mpirun "$n" "$COOPSOLVE" --backend host "$@" --output "$TMP/$name.h5" >"$TMP/$name.out" 2>&1 ||
    { cat "$TMP/$name.out"; fail "monitor $name"; }
  grep '^  iter ' "$TMP/$name.out" >"$TMP/$name.mon"
}
for n in 1 2; do
  mon cg$n $n "$INPUTS/matrix.ini" --set "problem.matrix=$COOP_SRCDIR/tests/data/nos6.mtx"
  lines=$(wc -l <"$TMP/cg$n.mon")
  [ "$lines" -ge 8 ] && [ "$lines" -le 30 ] || { cat "$TMP/cg$n.mon"; fail "auto monitor, CG: $lines lines"; }
  head -1 "$TMP/cg$n.mon" | grep -q '^  iter          0 ' || fail "auto monitor: no first check"
  its=$(sed -n 's/^  iterations  //p' "$TMP/cg$n.out")
  tail -1 "$TMP/cg$n.mon" | grep -q "^  iter  *$its " || { cat "$TMP/cg$n.mon"; fail "auto monitor: not the last check ($its)"; }
  grep -q ' Mrows/s$' "$TMP/cg$n.mon" && ! grep -q 'Mpts' "$TMP/cg$n.mon" || fail "auto monitor: a matrix's rows"
  mon heat$n $n "$INPUTS/heat.ini" --set grid.nx=32 --set grid.ny=32 --set solver.max_iter=400 --set solver.check_every=1
  lines=$(wc -l <"$TMP/heat$n.mon")
  [ "$lines" -ge 18 ] && [ "$lines" -le 23 ] || { cat "$TMP/heat$n.mon"; fail "auto monitor, heat: $lines lines"; }
  grep -q '^  iter         20 .*  t 0\.00' "$TMP/heat$n.mon" || { cat "$TMP/heat$n.mon"; fail "heat monitor: no t"; }
  mon every$n $n "$INPUTS/quickstart.ini" --set grid.nx=16 --set grid.ny=16 --set solver.max_iter=30 \
    --set solver.check_every=1 --set output.monitor_every=7
  [ "$(sed -n 's/^  iter  *\([0-9]*\) .*/\1/p' "$TMP/every$n.mon" | tr '\n' ' ')" = "0 7 14 21 28 " ] ||
    { cat "$TMP/every$n.mon"; fail "output.monitor_every = 7"; }
done
# the summary echoes the stop test and gives each phase's min / max / mean over the ranks
grep -q '^  stop        rtol 1e-10 (of the initial residual), atol 0, dtol 100000, max_iter 10000; residual 2-norm, unpreconditioned$' \
  "$TMP/cg2.out" || { cat "$TMP/cg2.out"; fail "summary: no stop line"; }
grep -q '^  phases      seconds, min / max / mean over 2 ranks: [a-z]* [0-9.e-]* / [0-9.e-]* / [0-9.e-]*' "$TMP/cg2.out" ||
  { cat "$TMP/cg2.out"; fail "summary: no phase table over the ranks"; }
what="output.monitor_every = x"
coop_expect_input_error "$TMP" 2 "output.monitor_every = x (from --set): expected auto or an integer >= 0" "" \
  "$INPUTS/quickstart.ini" --set output.monitor_every=x
