#!/bin/sh
# Hostile inputs and faults end as promised (issue 6): bad input is exit 2 with
# one message before any work; a run-time fault is exit 1 with one message, no
# hang, no temporary left, and a previous good output kept; nothing outside
# the output's own names is touched. Every mpirun runs under a timeout, so a
# hang fails the test instead of stalling it. Cases that need root (a tmpfs
# for a full disk) are skipped where that is impossible: then the script ends
# with 77 after all the others passed.
. "$COOP_SRCDIR/tests/common.sh"
coop_tmpdir
command -v timeout >/dev/null 2>&1 || { echo "SKIP: no timeout(1)"; exit 77; }
MOUNTS=
trap 'for m in $MOUNTS; do umount "$m" 2>/dev/null; done; rm -rf "$TMP"' EXIT
skipped=

# every coop_mpirun below ends within 60 s
REAL_MPIEXEC=$MPIEXEC
MPIEXEC=$TMP/mpiexec
printf '#!/bin/sh\nexec timeout -k 5 60 "%s" "$@"\n' "$REAL_MPIEXEC" >"$MPIEXEC"
chmod +x "$MPIEXEC"

RUN="$INPUTS/quickstart.ini --set solver.max_iter=10 --set output.monitor_every=0"

# bad WHAT RANKS DIR PREFIX SUBSTRING ARG...: exit 2, one message (coop_expect_input_error)
bad() {
  what=$1 n=$2 dir=$3
  shift 3
  coop_expect_input_error "$dir" "$n" "$@"
  echo "ok: $what"
}

# fault1 WHAT RANKS DIR SUBSTRING ARG...: run in DIR; exit 1, no hang, exactly one
# "coopsolve:" line on stderr and it holds SUBSTRING.
fault1() {
  what=$1 n=$2 dir=$3 sub=$4
  shift 4
  rc=0
  (cd "$dir" && coop_mpirun "$n" "$COOPSOLVE" --backend host "$@" >"$TMP/out" 2>"$TMP/err" </dev/null) || rc=$?
  [ $rc != 124 ] && [ $rc != 137 ] || fail "$what: hung (killed by timeout)"
  [ $rc = 1 ] || { cat "$TMP/err"; fail "$what: exit status $rc, not 1"; }
  lines=$(grep -c '^coopsolve:' "$TMP/err")
  [ "$lines" = 1 ] || { cat "$TMP/err"; fail "$what: $lines coopsolve lines on stderr, not 1"; }
  want="$sub" awk 'index($0, ENVIRON["want"]) { n++ } END { exit n == 0 }' "$TMP/err" ||
    { cat "$TMP/err"; fail "$what: message lacks '$sub'"; }
  echo "ok: $what"
}

# holds DIR NAMES: DIR holds exactly these names (sorted, space-separated), so
# no temporary was left and nothing else was made.
holds() {
  got=$(ls -A "$1" | sort | tr '\n' ' ')
  [ "$got" = "$2 " ] || fail "$what: $1 holds '$got', expected '$2 '"
}

# A good output to keep: out.h5 and out.xmf in DIR, copied to $TMP/keep.*
good_output() {
  (cd "$1" && coop_mpirun 1 "$COOPSOLVE" --backend host $RUN --output out.h5 >/dev/null 2>"$TMP/err") ||
    { cat "$TMP/err"; fail "good run in $1"; }
  cp "$1/out.h5" "$TMP/keep.h5" && cp "$1/out.xmf" "$TMP/keep.xmf" || fail "cannot copy the good output"
}

kept() {
  cmp -s "$1/out.h5" "$TMP/keep.h5" && cmp -s "$1/out.xmf" "$TMP/keep.xmf" ||
    fail "$what: the previous good output in $1 changed"
}

# ---- 1, 2: sizes whose product overflows, memory that cannot fit -------------
mkdir "$TMP/size"
for n in 1 2; do
  for dry in "" --dry-run; do
    bad "nx*ny*nz past int64 at $n ranks $dry" $n "$TMP/size" \
      "grid.nx x grid.ny x grid.nz = 1.329e+36 points: at most 2^53" "" $RUN $dry \
      --set grid.dim=3 --set grid.nx=1099511627776 --set grid.ny=1099511627776 --set grid.nz=1099511627776
    # below 2^53 points, but 2^52 points need 2^57 bytes: refused before any allocation
    bad "2^52 points at $n ranks $dry" $n "$TMP/size" "grid.nx x grid.ny = 67108864 x 67108864 points" \
      "MiB of host memory at its peak" $RUN $dry --set grid.nx=67108864 --set grid.ny=67108864
  done
  bad "2^52 points, cg, at $n ranks" $n "$TMP/size" "grid.nx x grid.ny = 67108864 x 67108864 points" \
    "with solver.name = cg" $RUN --set grid.nx=67108864 --set grid.ny=67108864 --set solver.name=cg
  # a small grid, but a step and a time held for each of 10^12 snapshots
  for dry in "" --dry-run; do
    bad "heat with 10^12 snapshots at $n ranks $dry" $n "$TMP/size" "grid.nx x grid.ny = 16 x 16 points" \
      "a time series of solver.max_iter / output.every = 1000000000000 / 1 snapshots" $RUN $dry \
      --set solver.name=heat --set output.every=1 --set solver.max_iter=1000000000000 --set grid.nx=16 --set grid.ny=16
  done
done
# the estimate counts what a rank allocates: under a data ulimit that fits one
# rank's share at 2 ranks but not the whole at 1 rank (2500^2 fp64 Jacobi: 286
# MiB at 1 rank, 143 MiB each at 2)
what="memory under ulimit -d"
probe_ok=1 # can a tiny run start under the limit at all? (a CUDA build's libraries on a many-core node may not)
(ulimit -d 200000 && cd "$TMP/size" && coop_mpirun 1 "$COOPSOLVE" --backend host $RUN --set grid.nx=8 \
  --set grid.ny=8 --set solver.max_iter=1 --output probe.h5 >/dev/null 2>&1) || probe_ok=0
rm -f "$TMP/size/probe.h5" "$TMP/size/probe.xmf"
if [ -n "${COOP_SANITIZE:-}" ]; then echo "skip: $what (AddressSanitizer's shadow memory does not fit a data ulimit)"
elif [ $probe_ok = 0 ]; then echo "skip: $what (the libraries alone do not start under ulimit -d 200000 here)"; else
(ulimit -d 200000 && bad "2500^2 at 1 rank under ulimit -d 200000" 1 "$TMP/size" \
  "grid.nx x grid.ny = 2500 x 2500 points" "a rank of this node may use 195.3 MiB" $RUN \
  --set grid.nx=2500 --set grid.ny=2500) || exit 1
(ulimit -d 200000 && cd "$TMP/size" && coop_mpirun 2 "$COOPSOLVE" --backend host $RUN \
  --set grid.nx=2500 --set grid.ny=2500 --set solver.max_iter=2 --output u.h5 >/dev/null 2>"$TMP/err") ||
  { cat "$TMP/err"; fail "2500^2 at 2 ranks under ulimit -d 200000 (fits: 143 MiB a rank)"; }
rm -f "$TMP/size/u.h5" "$TMP/size/u.xmf"
echo "ok: $what"
fi
# the estimate against the peak resident memory, measured (python's getrusage)
# with a checkpoint written, which the estimate counts (a signal may ask for one);
# not under AddressSanitizer, whose shadow memory and redzones are in the peak
if [ -z "${COOP_SANITIZE:-}" ] && command -v python3 >/dev/null 2>&1; then
  peak() { # the largest child's max RSS, KiB
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$COOPSOLVE" --backend host $RUN \
      --set solver.max_iter=2 --set solver.check_every=1 --set output.checkpoint_every=1 \
      --output "$TMP/size/m.h5" "$@" || fail "peak $*"
  }
  estimate() { # MiB on rank 0 by --dry-run
    "$COOPSOLVE" --backend host $RUN --dry-run "$@" |
      sed -n 's/^# memory on rank 0: \([0-9.]*\) MiB host at its peak.*/\1/p'
  }
  for s in jacobi cg pipecg; do
    # laplace: the sine problem is an eigenvector, CG would stop before a checkpoint
    small="--set grid.nx=16 --set grid.ny=16 --set solver.name=$s --set problem.type=laplace"
    big="--set grid.nx=1200 --set grid.ny=1200 --set solver.name=$s --set problem.type=laplace"
    grow=$(( $(peak $big) - $(peak $small) ))
    e=$(awk -v a="$(estimate $big)" -v b="$(estimate $small)" 'BEGIN { print (a - b) * 1024 }')
    awk -v g="$grow" -v e="$e" 'BEGIN { exit !(e >= 0.95 * g && e <= 1.10 * g) }' ||
      fail "$s: memory estimate grows by $e KiB, the measured peak by $grow KiB"
    echo "ok: $s memory estimate $e KiB against a measured $grow KiB"
  done
fi

# ---- 3: a full disk: a 256 KiB tmpfs at 1 and 2 ranks -------------------------
mkdir "$TMP/full"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=256k tmpfs "$TMP/full" 2>/dev/null; then
  MOUNTS="$TMP/full"
  good_output "$TMP/full"
  for n in 1 2; do
    # found before HDF5 starts: the field alone (512 KiB) is more than is free
    fault1 "full disk, 256^2, $n ranks" $n "$TMP/full" "(No space left on device)" $RUN \
      --set grid.nx=256 --set grid.ny=256 --output out.h5
    holds "$TMP/full" "out.h5 out.xmf"
    kept "$TMP/full"
    # a field that fits what is free, a file that does not: HDF5's write fails
    free=$(df -P -B1 "$TMP/full" | awk 'NR == 2 { print $4 }')
    side=$(awk -v f="$free" 'BEGIN { print int(sqrt((f - 4096) / 8)) }')
    fault1 "full disk during the write, $side^2, $n ranks" $n "$TMP/full" "is full" $RUN \
      --set grid.nx=$side --set grid.ny=$side --output out.h5
    holds "$TMP/full" "out.h5 out.xmf"
    kept "$TMP/full"
    # heat's time series: room for all its snapshots is asked for before the solve
    fault1 "full disk, a time series of 11 snapshots of 64^2, $n ranks" $n "$TMP/full" \
      "(No space left on device)" $RUN --set solver.name=heat --set output.every=1 --set grid.nx=64 \
      --set grid.ny=64 --output out.h5
    holds "$TMP/full" "out.h5 out.xmf"
    kept "$TMP/full"
    # a checkpoint the disk has no room for: the write fails on one rank first;
    # the others must not wait in HDF5's next collective call for it
    fault1 "full disk during a checkpoint, $n ranks" $n "$TMP/full" "is full" $RUN \
      --set grid.nx=$side --set grid.ny=$side --set output.checkpoint_every=5 --output out.h5
    holds "$TMP/full" "out.h5 out.xmf"
    kept "$TMP/full"
  done
else
  echo "SKIP: full disk (needs root to mount a tmpfs)"
  skipped=1
fi

# ---- 4: an unwritable folder: named, before the solve --------------------------
mkdir "$TMP/ro"
if [ "$(id -u)" = 0 ]; then
  if mount -t tmpfs -o ro,size=64k tmpfs "$TMP/ro" 2>/dev/null; then
    MOUNTS="$MOUNTS $TMP/ro"
    why="(Read-only file system)"
  else
    why=
  fi
else
  chmod 555 "$TMP/ro"
  why="(Permission denied)"
fi
if [ -n "$why" ]; then
  for n in 1 2; do
    bad "unwritable folder at $n ranks" $n "$TMP" \
      "output.file = ro/out.h5 (from --set): its directory ro is not writable $why" "" \
      $RUN --set solver.max_iter=100000000 --output ro/out.h5
  done
  [ "$(id -u)" = 0 ] || chmod 755 "$TMP/ro"
else
  echo "SKIP: unwritable folder (root, and no read-only tmpfs can be mounted)"
  skipped=1
fi

# ---- 5: paths too long for MPI-IO, NAME_MAX or PATH_MAX, found before the solve ----
d100=$(printf '%0100d' 0)
mkdir -p "$TMP/long/$d100/$d100/$d100"
long="long/$d100/$d100/$d100/out.h5"
for n in 1 2; do
  # Open MPI's ompio once overflowed a 256-byte buffer with this (abort, after the solve)
  bad "output path of ${#long} characters at $n ranks" $n "$TMP" "output.file = $long (from --set): is too long" \
    "" $RUN --set solver.max_iter=100000000 --output "$long"
done
bad "file name past NAME_MAX" 1 "$TMP" "output.file = long/$(printf '%0260d' 0).h5 (from --set): its file name" \
  "this file system takes at most" $RUN --output "long/$(printf '%0260d' 0).h5"
deep=long
while [ ${#deep} -lt 4200 ]; do deep=$deep/$d100; done
bad "path past PATH_MAX" 1 "$TMP" "output.file = $deep/out.h5 (from --set): is " "characters long; a path holds at most" \
  $RUN --output "$deep/out.h5"
# a long path that fits is written
what="output path of $((${#long} - 101)) characters"
(cd "$TMP" && coop_mpirun 2 "$COOPSOLVE" --backend host $RUN --output "long/$d100/$d100/out.h5" >/dev/null 2>"$TMP/err") ||
  { cat "$TMP/err"; fail "$what"; }
holds "$TMP/long/$d100/$d100" "$d100 out.h5 out.xmf"
echo "ok: $what"
# a 254-character file name: its XDMF name (.h5 -> .xmf) is 255, what the file system takes
name=$(printf '%0251d' 0)
what="a file name of 254 characters"
mkdir "$TMP/name"
(cd "$TMP/name" && coop_mpirun 1 "$COOPSOLVE" --backend host $RUN --set output.checkpoint=c.h5 --output "$name.h5" \
  >/dev/null 2>"$TMP/err") || { cat "$TMP/err"; fail "$what"; }
holds "$TMP/name" "$name.h5 $name.xmf"
echo "ok: $what"

# ---- 6: temporaries never follow a planted symlink; the output's own name is replaced, not followed
mkdir "$TMP/sym" "$TMP/elsewhere"
echo precious >"$TMP/elsewhere/victim"
echo precious >"$TMP/elsewhere/victim2"
for n in 1 2; do
  what="planted symlinks at $n ranks"
  rm -f "$TMP/sym/"* "$TMP/elsewhere/absent"
  ln -s ../elsewhere/victim "$TMP/sym/out.h5.tmp"
  ln -s ../elsewhere/absent "$TMP/sym/out.xmf.tmp"
  ln -s ../elsewhere/victim2 "$TMP/sym/out.h5"
  (cd "$TMP/sym" && coop_mpirun $n "$COOPSOLVE" --backend host $RUN --output out.h5 >/dev/null 2>"$TMP/err") ||
    { cat "$TMP/err"; fail "$what: the run failed"; }
  [ "$(cat "$TMP/elsewhere/victim")" = precious ] && [ "$(cat "$TMP/elsewhere/victim2")" = precious ] ||
    fail "$what: a file outside the output's names was written"
  [ ! -e "$TMP/elsewhere/absent" ] || fail "$what: a dangling symlink's target was created"
  [ "$(readlink "$TMP/sym/out.h5.tmp")" = ../elsewhere/victim ] &&
    [ "$(readlink "$TMP/sym/out.xmf.tmp")" = ../elsewhere/absent ] || fail "$what: a planted symlink was touched"
  [ -f "$TMP/sym/out.h5" ] && [ ! -L "$TMP/sym/out.h5" ] || fail "$what: out.h5 is not the new file"
  holds "$TMP/sym" "out.h5 out.h5.tmp out.xmf out.xmf.tmp"
  echo "ok: $what"
done

# ---- 7: a FIFO, a directory or a device as an input (file, matrix, rhs, x0,
#         --restart): refused, never waited on ------------------------------------
mkdir "$TMP/fifo"
mkfifo "$TMP/fifo/pipe" || fail "mkfifo"
mtx="$COOP_SRCDIR/tests/data/nos6.mtx"
for n in 1 2; do
  bad "FIFO as the input file at $n ranks" $n "$TMP/fifo" "pipe: cannot read the input file: not a regular file" "" pipe
  bad "FIFO as the matrix at $n ranks" $n "$TMP/fifo" "pipe: not a regular file" "" \
    "$INPUTS/matrix.ini" --set problem.matrix=pipe
  bad "FIFO as problem.rhs at $n ranks" $n "$TMP/fifo" "pipe: not a regular file" "" \
    "$INPUTS/matrix.ini" --set "problem.matrix=$mtx" --set problem.rhs=file:pipe
  bad "FIFO as problem.x0 at $n ranks" $n "$TMP/fifo" "pipe: not a regular file" "" \
    "$INPUTS/matrix.ini" --set "problem.matrix=$mtx" --set problem.x0=file:pipe
done
for n in 1 2; do
  bad "FIFO as the --restart file at $n ranks" $n "$TMP/fifo" "pipe: cannot read the checkpoint: not a regular file" "" \
    $RUN --restart pipe
done
# ...and as an output: the finished file would be renamed over it
for n in 1 2; do
  what="FIFO as output.file at $n ranks"
  bad "$what" $n "$TMP/fifo" "output.file = pipe (from --set): names a device, FIFO or socket" "" $RUN --output pipe
  [ -p "$TMP/fifo/pipe" ] || fail "$what: the FIFO was replaced"
  bad "FIFO as output.checkpoint at $n ranks" $n "$TMP/fifo" "output.checkpoint = pipe (from --set): names a device" "" \
    $RUN --set output.checkpoint=pipe
done
if mknod "$TMP/fifo/null" c 1 3 2>/dev/null; then
  bad "a device as output.file" 1 "$TMP/fifo" "output.file = null (from --set): names a device" "" $RUN --output null
  [ -c "$TMP/fifo/null" ] || fail "a device as output.file: the device was replaced"
  rm -f "$TMP/fifo/null"
else
  echo "note: no mknod here (not root); the device case is the FIFO's"
fi
mkdir "$TMP/fifo/res.xmf"
bad "the XDMF name taken by a directory" 2 "$TMP/fifo" "output.file = res.h5 (from --set): the name of the XDMF file written beside it" "" \
  $RUN --output res.h5
[ ! -e "$TMP/fifo/res.h5" ] || fail "$what: res.h5 was written"
rmdir "$TMP/fifo/res.xmf"
# an output, its XDMF file or a checkpoint named (under any spelling) as a file the run reads
cp "$INPUTS/quickstart.ini" "$TMP/fifo/in.ini"
cp "$mtx" "$TMP/fifo/A.mtx"
for n in 1 2; do
  bad "output.file is the input file at $n ranks" $n "$TMP/fifo" "output.file = ./in.ini (from --set): ./in.ini would replace in.ini" "" \
    in.ini --set solver.max_iter=10 --output ./in.ini
  bad "output.checkpoint is the input file at $n ranks" $n "$TMP/fifo" "output.checkpoint = ../fifo/in.ini (from --set): " \
    "would replace in.ini, which this run reads" in.ini --set output.checkpoint=../fifo/in.ini
  bad "output.checkpoint is output.file spelt ./ at $n ranks" $n "$TMP/fifo" \
    "output.checkpoint = ./o.h5: the same file as output.file (o.h5)" "" $RUN --output o.h5 --set output.checkpoint=./o.h5
  bad "output.checkpoint is the XDMF file at $n ranks" $n "$TMP/fifo" \
    "output.checkpoint = o.xmf: the same file as the XDMF file of output.file (o.xmf)" "" $RUN --output o.h5 \
    --set output.checkpoint=o.xmf
  bad "output.file is the matrix at $n ranks" $n "$TMP/fifo" "output.file = A.mtx (from --set): A.mtx would replace" "" \
    "$INPUTS/matrix.ini" --set "problem.matrix=$TMP/fifo/A.mtx" --output A.mtx
done
cp "$INPUTS/quickstart.ini" "$TMP/fifo/in.xmf"
bad "the XDMF file would replace the input" 1 "$TMP/fifo" "output.file = in.h5 (from --set): in.xmf would replace in.xmf" "" \
  in.xmf --set solver.max_iter=10 --output in.h5
cmp -s "$INPUTS/quickstart.ini" "$TMP/fifo/in.xmf" || fail "the input file in.xmf was changed"
rm -f "$TMP/fifo/in.xmf"
cmp -s "$INPUTS/quickstart.ini" "$TMP/fifo/in.ini" || fail "the input file was changed"
bad "a directory as the matrix" 1 "$TMP/fifo" "$TMP: is a directory" "" "$INPUTS/matrix.ini" --set "problem.matrix=$TMP"
bad "a device as the input file" 1 "$TMP/fifo" "/dev/null: cannot read the input file: not a regular file" "" /dev/null

# ---- 8: absurd box lengths: named, before any work --------------------------------
mkdir "$TMP/box"
for v in lx=1e-300 lx=1e300 ly=1e150; do
  bad "grid.$v" 1 "$TMP/box" "grid.${v%%=*} = " "the stencil weight 1/h^2" $RUN --set "grid.$v"
done
bad "grid.lz=1e-200 in 3D, 2 ranks, dry run" 2 "$TMP/box" "grid.lz = 1e-200 (from --set): " "" \
  $RUN --set grid.dim=3 --set grid.nz=16 --set grid.lz=1e-200 --dry-run
bad "grid.lx=1e-70 with cg" 1 "$TMP/box" "grid.lx = 1e-70 (from --set): " "outside" \
  $RUN --set grid.lx=1e-70 --set solver.name=cg
bad "grid.lx=1e-20 in fp32" 1 "$TMP/box" "grid.lx = 1e-20 (from --set): " "fp32" \
  $RUN --set grid.lx=1e-20 --set solver.precision=fp32

# ---- 9: FILE:LINE of a long path, and a long --set, never cut ------------------------
mkdir "$TMP/msg"
in=.
while [ ${#in} -lt 3600 ]; do in=$in/$d100; done
mkdir -p "$TMP/msg/$in"
in=$in/in.ini
printf '[output]\nfile = out.h5\n[problem]\n[solver]\nmax_iter = 10\n[grid]\nnx = 16\nny = 16\nnxx = 4\n' >"$TMP/msg/$in"
bad "an error at line 9 of a ${#in}-character path" 1 "$TMP/msg" \
  "$in:9: unknown key 'nxx' in [grid]; did you mean 'nx'?" "" "$in"
word=$(printf '%2000s' '' | tr ' ' y)
bad "a --set of 2008 characters" 1 "$TMP/msg" "--set grid.nx=$word: expected an integer in [1, 1099511627776]" \
  "" "$INPUTS/quickstart.ini" --set "grid.nx=$word"

# ---- 10: one rank's write fails inside the collective write: abort, not deadlock ----
mkdir "$TMP/coll"
good_output "$TMP/coll"
for f in write:1:2 write:2:3 write:0:1 xdmf:0:2; do
  where=${f%:*} n=${f##*:}
  export COOP_FAULT=$where
  fault1 "failed write ($where) at $n ranks" $n "$TMP/coll" "fault injected (COOP_FAULT=$where)" \
    $RUN --output out.h5
  unset COOP_FAULT
  holds "$TMP/coll" "out.h5 out.xmf"
  kept "$TMP/coll"
done
# ...and inside a checkpoint's (each step agreed, as the output's: it hung in a collective close)
for f in ckpt:1:2 ckpt:2:3 ckpt:0:2 ckpt:0:1; do
  where=${f%:*} n=${f##*:}
  export COOP_FAULT=$where
  fault1 "failed checkpoint write ($where) at $n ranks" $n "$TMP/coll" "fault injected (COOP_FAULT=$where)" \
    $RUN --output out.h5 --set output.checkpoint_every=5
  unset COOP_FAULT
  holds "$TMP/coll" "out.h5 out.xmf"
  kept "$TMP/coll"
done

[ -z "$skipped" ] || exit 77
exit 0
