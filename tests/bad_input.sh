#!/bin/sh
# Every class of bad input (input file, --set, command line, grid, output path)
# must stop the run with exit status 2 and one message from rank 0 that says
# where ("coopsolve: FILE:LINE: ..." or the option), and must write nothing.
. "$COOP_SRCDIR/tests/common.sh"
coop_tmpdir

# A valid input, '|' between lines; [grid] is open at the end, so a line
# appended to it is line 9.
GOOD='[output]|file = out.h5|[problem]|[solver]|max_iter = 10|[grid]|nx = 16|ny = 16'
nc=0

# bad RANKS MESSAGE INPUT [ARG...]: write INPUT ('|' between lines; '-': none;
# 'DIR': a directory; 'BIG': a sparse file of 2200 MiB) as in.ini in a fresh
# directory and run coopsolve there with ARGs (default: in.ini). Expect what
# coop_expect_input_error (tests/common.sh) checks, with a message starting
# "coopsolve: MESSAGE" (and holding $bsub where that is set), and no file
# beside in.ini.
bsub=
bad() {
  n=$1 msg=$2 text=$3
  shift 3
  coop_case_dir
  case $text in
    -) ;;
    DIR) mkdir "$d/in.ini" ;;
    BIG) truncate -s 2200M "$d/in.ini" || fail "cannot make a sparse file" ;;
    *) printf '%s\n' "$text" | tr '|' '\n' >"$d/in.ini" ;;
  esac
  [ $# -gt 0 ] || set -- in.ini
  what="case $nc, $n ranks, args '$*'"
  coop_expect_input_error "$d" "$n" "$msg" "$bsub" "$@"
  left=$(cd "$d" && ls -A | tr '\n' ' ')
  [ "$left" = "$([ "$text" = - ] || echo 'in.ini ')" ] || fail "$what: its directory holds '$left'"
}
# bad_sub RANKS SUBSTRING INPUT [ARG...]: as bad, for a message that holds
# SUBSTRING after the key it starts with (the halo transports' own messages)
bad_sub() {
  bsub=$2 n=$1
  shift 2
  bad "$n" "" "$@"
  bsub=
}

# -- the input file cannot be read
bad 2 "missing.ini: cannot read the input file" - missing.ini
bad 1 "missing.ini: cannot read the input file" - missing.ini
bad 3 "missing.ini: cannot read the input file" - missing.ini
bad 2 "in.ini: cannot read the input file: not a regular file" DIR
# more than one MPI_Bcast count (an int) can pass on: refused before it is read
if command -v truncate >/dev/null 2>&1; then
  bad 2 "in.ini: cannot read the input file: 2306867200 bytes, more than an input file may hold" BIG
fi

# -- unknown keys and sections
bad 2 "in.ini:9: unknown key 'nxx' in [grid]; did you mean 'nx'?" "$GOOD|nxx = 4"
bad 1 "in.ini:9: unknown key 'nxx' in [grid]; did you mean 'nx'?" "$GOOD|nxx = 4"
bad 3 "in.ini:9: unknown key 'nxx' in [grid]; did you mean 'nx'?" "$GOOD|nxx = 4"
bad 2 "in.ini:9: unknown key 'rtol' in [grid]; it belongs in [solver]" "$GOOD|rtol = 1e-3"
bad 2 "in.ini:9: unknown key 'colour' in [grid]; " "$GOOD|colour = red"
bad 2 "in.ini:9: unknown section [gird]; did you mean [grid]?" "$GOOD|[gird]"
bad 2 "in.ini:9: unknown section [physics]; known sections: [grid], [problem]" "$GOOD|[physics]"

# -- values of the wrong type or out of range
bad 2 "in.ini:9: grid.ghost = two: expected an integer in [1, 16]" "$GOOD|ghost = two"
bad 2 "in.ini:9: grid.ghost = 1.5: expected an integer in [1, 16]" "$GOOD|ghost = 1.5"
bad 2 "in.ini:9: grid.ghost = 17: expected an integer in [1, 16]" "$GOOD|ghost = 17"
bad 2 "in.ini:9: grid.ghost = 99999999999999999999: expected an integer" \
  "$GOOD|ghost = 99999999999999999999"
bad 2 "in.ini:9: grid.dim = 4: expected an integer in [2, 3]" "$GOOD|dim = 4"
bad 2 "in.ini:9: grid.lx = 1,5: expected a real in (0, inf)" "$GOOD|lx = 1,5"
bad 2 "in.ini:9: grid.lx = 0: expected a real in (0, inf)" "$GOOD|lx = 0"
bad 2 "in.ini:9: grid.ly = nan: expected a real" "$GOOD|ly = nan"
bad 2 "in.ini:10: run.backend = gpu: expected one of: auto, host, cuda" "$GOOD|[run]|backend = gpu"
bad 2 "in.ini:6: output.xdmf = maybe: expected true or false" \
  '[grid]|[problem]|[solver]|# only a comment|[output]|xdmf = maybe'
bad 2 "in.ini:9: empty value for key 'ghost'" "$GOOD|ghost ="
bad 2 "in.ini:10: unterminated quoted value for key 'sync'" "$GOOD|[run]|sync = \"grid"

# -- duplicates and missing sections
bad 2 "in.ini:9: duplicate key 'nx' (first set at line 7)" "$GOOD|nx = 8"
bad 2 "in.ini:9: section [solver] appears twice (first at line 4)" "$GOOD|[solver]"
bad 2 "in.ini: missing section [solver]" '[grid]|nx = 16|[problem]'
bad 2 "in.ini: missing section [grid]" ''

# -- malformed lines
bad 2 "in.ini:9: expected 'key = value' or '[section]', got 'nx 16'" "$GOOD|nx 16"
bad 2 "in.ini:9: section header '[run' is not closed" "$GOOD|[run"
bad 2 "in.ini:9: unexpected text 'x' after ']'" "$GOOD|[run] x"
bad 2 "in.ini:9: empty section name '[]'" "$GOOD|[]"
bad 2 "in.ini:9: missing key before '='" "$GOOD|= 3"
bad 2 "in.ini:1: key 'nx' before any [section]" "nx = 16|$GOOD"

# -- grid.nz and grid.lz mean nothing in 2D
bad 2 "in.ini:9: grid.nz is only used when grid.dim = 3 (grid.dim = 2, from default)" "$GOOD|nz = 8"
bad 2 "in.ini:10: grid.lz is only used when grid.dim = 3 (grid.dim = 2, from in.ini:9)" \
  "$GOOD|dim = 2|lz = 2"
bad 2 "--set grid.nz=8: grid.nz is only used when grid.dim = 3" "$GOOD" in.ini --set grid.nz=8
bad 2 "in.ini:10: grid.nz is only used when grid.dim = 3 (grid.dim = 2, from --set)" \
  "$GOOD|dim = 3|nz = 8" in.ini --set grid.dim=2

# -- bad --set
bad 2 "--set grid.nx: expected section.key=value" "$GOOD" --set grid.nx in.ini
bad 2 "--set nx=3: expected section.key=value" "$GOOD" --set nx=3 in.ini
bad 2 "--set grid.nxx=3: unknown key 'nxx' in [grid]; did you mean 'nx'?" "$GOOD" --set grid.nxx=3 in.ini
bad 3 "--set grid.nxx=3: unknown key 'nxx' in [grid]; did you mean 'nx'?" "$GOOD" --set grid.nxx=3 in.ini
bad 2 "--set gird.nx=3: unknown section [gird]; did you mean [grid]?" "$GOOD" --set gird.nx=3 in.ini
bad 2 "--set grid.nx=abc: expected an integer in [1, 1099511627776]" "$GOOD" --set grid.nx=abc in.ini
bad 2 "--set solver.rtol=1: expected a real in [0, 1)" "$GOOD" in.ini --set solver.rtol=1
bad 2 "--set solver.precision=fp16: expected one of: fp64, fp32" "$GOOD" in.ini --set solver.precision=fp16
bad 2 "solver.cg_single_reduction = true (from --set) applies to solver.name = cg, not jacobi" "$GOOD" in.ini --set solver.cg_single_reduction=true
bad 2 "--set output.xdmf=maybe: expected true or false" "$GOOD" in.ini --set output.xdmf=maybe
bad 2 "--set grid.nx=: empty value" "$GOOD" in.ini --set grid.nx=
bad 2 "option --set needs a value" "$GOOD" in.ini --set

# -- bad command lines
bad 2 "unknown option '--bogus' (see coopsolve --help)" "$GOOD" --bogus in.ini
bad 1 "unknown option '-x' (see coopsolve --help)" "$GOOD" in.ini -x
bad 2 "option --backend gpu: expected host or cuda" "$GOOD" --backend gpu in.ini
bad 2 "option --backend needs a value" "$GOOD" in.ini --backend
bad 2 "option --device abc: expected a GPU index 0..4096" "$GOOD" --device abc in.ini
bad 2 "option --device -1: expected a GPU index 0..4096" "$GOOD" --device=-1 in.ini
bad 2 "option --device needs a value" "$GOOD" --device= in.ini
bad 2 "more than one input file given ('in.ini' and 'other.ini')" "$GOOD" in.ini other.ini
bad 2 "no input file given" - --dry-run
bad 1 "no input file given" - --set grid.nx=4

# -- the grid cannot be split over the ranks
bad 3 "grid.ny = 2: too small for 3 ranks (split over 3 ranks along y" "$GOOD" in.ini --set grid.nx=2 --set grid.ny=2
bad 2 "grid.ny = 1: too small for 2 ranks" "$GOOD" in.ini --set grid.nx=1 --set grid.ny=1
bad 2 "grid.ny = 3: too small for 2 ranks (split over 2 ranks along y it leaves a rank fewer than 2 point(s), the ghost width)" "$GOOD|ghost = 2" in.ini --set grid.nx=3 --set grid.ny=3
bad 3 "grid.ny = 2: too small for 3 ranks" "$GOOD" in.ini --set grid.nx=2 --set grid.ny=2 --dry-run
# -- more points than the counts (int64_t, size_t) hold: they would wrap and size
#    arrays smaller than the loops that fill them (the Krylov form crashed)
bad 1 "grid.nx x grid.ny x grid.nz = 7.379e+19 points: at most 2^53" "$GOOD" in.ini \
  --set grid.dim=3 --set grid.nx=4194304 --set grid.ny=4194304 --set grid.nz=4194304 --set solver.name=cg
bad 2 "grid.nx x grid.ny = 1.209e+24 points: at most 2^53" "$GOOD" in.ini \
  --set grid.nx=1099511627776 --set grid.ny=1099511627776 --dry-run

# -- the output file's directory does not exist
bad 2 "output.file = nodir/out.h5 (from --set): its directory does not exist" \
  "$GOOD" in.ini --output nodir/out.h5
bad 2 "output.file = nodir/x.h5 (from in.ini:5): its directory does not exist" \
  '[grid]|[problem]|[solver]|[output]|file = nodir/x.h5'
bad 3 "output.file = nodir/x.h5 (from --set): its directory does not exist" \
  "$GOOD" in.ini --set output.file=nodir/x.h5 --dry-run
# -- the output path is a file's child, or names a directory
bad 2 "output.file = in.ini/x.h5 (from --set): its directory is not a directory" \
  "$GOOD" in.ini --output in.ini/x.h5
bad 2 "output.file = ./ (from --set): names a directory, not a file" "$GOOD" in.ini --output ./
bad 2 "output.file = . (from --set): names a directory, not a file" "$GOOD" in.ini --output .

# -- GPU-to-GPU halos asked for where they cannot be
bad_sub 2 "halo = ipc needs GPU memory (run.backend = cuda)" "$GOOD" in.ini --set tune.halo=ipc
bad 2 "--set tune.halo=ucx: expected one of: auto, mpi, ipc, nccl" "$GOOD" in.ini --set tune.halo=ucx
# NCCL halos: refused on a build without NCCL, and on the host backend
if "$COOPSOLVE" --version | grep -q '^NCCL: yes'; then
  bad_sub 2 "halo = nccl needs GPU memory (run.backend = cuda)" "$GOOD" in.ini --set tune.halo=nccl
else
  bad_sub 2 "halo = nccl: this build has no NCCL (configure --with-nccl)" "$GOOD" in.ini --set tune.halo=nccl
fi

# -- names of earlier versions: refused, naming the key they are now (docs/keys.md)
bad 2 "in.ini:10: run.resident is now tune.resident" "$GOOD|[run]|resident = false"
bad 3 "in.ini:10: run.blocks is now tune.blocks" "$GOOD|[run]|blocks = 4"
bad 2 "--set run.fuse_sweeps=2: run.fuse_sweeps is now tune.fuse_sweeps" "$GOOD" in.ini --set run.fuse_sweeps=2
bad 2 "--set run.halo=mpi: run.halo is now tune.halo" "$GOOD" in.ini --set run.halo=mpi
bad 2 "--set run.overlap=false: run.overlap is now tune.overlap" "$GOOD" in.ini --set run.overlap=false

# -- [batch] inputs: generators, files, keys of the other kind of input, size
DATA=$COOP_SRCDIR/tests/data
B='[output]|file = out.h5|[solver]|name = cg|[batch]|count = 4'
BM='[output]|file = out.h5|[solver]|name = cg|[batch]'
bad 2 "in.ini:7: batch.sizes = normal:4: unknown generator 'normal'" "$B|sizes = normal:4"
bad 1 "in.ini:7: batch.sizes = uniform:4:: expected uniform:LO:HI or uniform:N with LO and HI integers" \
  "$B|sizes = uniform:4:"
bad 2 "in.ini:7: batch.sizes = uniform:a: expected uniform:LO:HI" "$B|sizes = uniform:a"
bad 2 "in.ini:7: batch.sizes = uniform:9:4: LO = 9 is above HI = 4" "$B|sizes = uniform:9:4"
bad 2 "in.ini:7: batch.sizes = loguniform:2:5000: 5000 points per side: at most 4096 in 2D" \
  "$B|sizes = loguniform:2:5000"
bad 2 "in.ini:8: batch.sizes = uniform:300: 300 points per side: at most 256 in 3D" "$B|dim = 3|sizes = uniform:300"
bad 2 "in.ini:7: batch.sizes = uniform:1: 1 points per side: at least 2" "$B|sizes = uniform:1"
bad 2 "--set batch.shift=uniform:-1:2: shifts are reals >= 0" "$B" in.ini --set batch.shift=uniform:-1:2
bad 2 "in.ini:7: batch.shift = loguniform:0:1: loguniform needs LO > 0" "$B|shift = loguniform:0:1"
bad 2 "--set batch.count=0: expected an integer in [1, 2147483647]" "$B" in.ini --set batch.count=0
bad 2 "in.ini:7: batch.rhs = zeros: expected one of: ones, random, zero" "$B|rhs = zeros"
bad 2 "in.ini:6: batch.matrices entry 2: missing.mtx: cannot open" "$BM|matrices = $DATA/nos6.mtx, missing.mtx"
bad 3 "in.ini:6: batch.matrices entry 2: missing.mtx: cannot open" "$BM|matrices = $DATA/nos6.mtx, missing.mtx" \
  in.ini --dry-run
bad 2 "in.ini:6: batch.matrices = a.mtx:b.mtx:c.mtx: entry 1: expected A.mtx or A.mtx:b.mtx" \
  "$BM|matrices = a.mtx:b.mtx:c.mtx"
bad 2 "in.ini:6: batch.matrices = a.mtx,,b.mtx: entry 2: expected A.mtx or A.mtx:b.mtx" "$BM|matrices = a.mtx,,b.mtx"
# the right-hand side of entry 2 is read by rank 1 (LPT gives nos6 to rank 0): still one message
bad 2 "in.ini:6: batch.matrices entry 2: nob.mtx: cannot open" "$BM|matrices = $DATA/nos6.mtx, $DATA/LFAT5.mtx:nob.mtx"
bad 2 "in.ini:6: batch.matrices entry 1: $DATA/hangGlider_2.mtx: row 915 has a zero or missing diagonal" \
  "$BM|matrices = $DATA/hangGlider_2.mtx" in.ini --set solver.pc=jacobi
bad 2 "batch.count = 4 (from in.ini:6) applies to generated problems, not to batch.matrices" "$B|matrices = x.mtx"
bad 2 "in.ini:1: [grid] does not apply to a [batch] input" "[grid]|nx = 8|$B"
bad 2 "--set grid.nx=8: [grid] does not apply to a [batch] input" "$B" in.ini --set grid.nx=8
bad 2 "in.ini: missing section [solver]" '[batch]|count = 2'
bad 2 "solver.name = pipecg (from --set): a [batch] input runs jacobi, cg or heat" "$B" in.ini --set solver.name=pipecg
# heat batches: generated problems only, their own keys, step counts in range
bad 2 "solver.name = heat (from --set) steps generated problems only: batch.matrices (from in.ini:6) has no grid spacing" \
  "$BM|matrices = $DATA/nos6.mtx" in.ini --set solver.name=heat
bad 2 "solver.alpha = 2 (from --set) applies to solver.name = heat" "$B" in.ini --set solver.alpha=2
bad 2 "solver.rtol = 0.5 (from --set) does not apply to solver.name = heat" "$B" in.ini --set solver.name=heat \
  --set solver.rtol=0.5
bad 2 "solver.max_iter = 5 (from --set) does not apply with solver.t_end" "$B" in.ini --set solver.name=heat \
  --set solver.t_end=0.001 --set solver.max_iter=5
bad 2 "solver.pc = jacobi (from --set) applies to solver.name = cg, not heat" "$B" in.ini --set solver.name=heat \
  --set solver.pc=jacobi
bad 2 "solver.t_end = 0.5 (from --set) applies to solver.name = heat" "$B" in.ini --set solver.t_end=0.5
bad 2 "--set solver.t_end=1e300: problem 0 (side 32, shift 0) would take more than 1000000000000 steps" \
  "$B" in.ini --set solver.name=heat --set solver.t_end=1e300
bad 2 "solver.t_end = 0.5 (from --set) applies to [batch] inputs; a grid heat run takes solver.max_iter steps" \
  "$GOOD" in.ini --set solver.name=heat --set solver.t_end=0.5
bad 2 "solver.t_end = 0.5 (from --set) applies to solver.name = heat, not jacobi" "$GOOD" in.ini --set solver.t_end=0.5
bad 2 "solver.pc = jacobi (from --set) applies to solver.name = cg, not jacobi" "$B" in.ini \
  --set solver.name=jacobi --set solver.pc=jacobi
# a batch's mode and schedule are batch.sync and batch.schedule, with their own values
bad 2 "run.sync = graph (from --set) does not apply to a [batch] input: batch.sync sets its mode" "$B" in.ini --set run.sync=graph
bad 2 "run.sync = grid (from in.ini:8) does not apply to a [batch] input: batch.sync sets its mode" "$B|[run]|sync = grid"
bad 2 "solver.check_every = 5 (from --set) does not apply to a [batch] input" "$B" in.ini --set solver.check_every=5
bad 2 "--set batch.schedule=fast: expected one of: auto, clc, atomic, static" "$B" in.ini --set batch.schedule=fast
bad 2 "--set batch.sync=graph: expected one of: auto, row, cluster, block, grid, launch, launch_each" "$B" in.ini \
  --set batch.sync=graph
bad 2 "--set run.sync=row: run.sync = row is now batch.sync = row" "$GOOD" in.ini --set run.sync=row
bad 2 "--set run.sync=launch_each: run.sync = launch_each is now batch.sync = launch_each" "$GOOD" in.ini --set run.sync=launch_each
bad 2 "in.ini:8: run.sync = cluster is now batch.sync = cluster" "$B|[run]|sync = cluster"
bad 2 "--set run.schedule=atomic: run.schedule is now batch.schedule in [batch] inputs, tune.csr_schedule for problem.type = matrix" \
  "$B" in.ini --set run.schedule=atomic
bad 2 "in.ini:8: run.group_blocks is now tune.group_blocks" "$B|[run]|group_blocks = 2"
bad 2 "tune.group_blocks = 4 (from --set) applies to [batch] inputs only" "$GOOD" in.ini --set tune.group_blocks=4
bad 2 "tune.group_blocks = 4 (from --set) sizes the groups of batch.sync = row, cluster or grid, not of batch.sync = auto" \
  "$B" in.ini --set tune.group_blocks=4
bad 2 "tune.group_blocks = 2 (from in.ini:8) sizes the groups of batch.sync = row, cluster or grid, not of batch.sync = block (from --set)" \
  "$B|[tune]|group_blocks = 2" in.ini --set batch.sync=block
bad 2 "tune.overlap = false (from --set) does not apply to a [batch] input" "$B" in.ini --set tune.overlap=false
bad 2 "tune.fused_halo = false (from --set) does not apply to a [batch] input" "$B" in.ini --set tune.fused_halo=false
bad 2 "tune.csr_schedule = static (from --set) does not apply to a [batch] input" "$B" in.ini --set tune.csr_schedule=static
# more than a node holds: refused before any work, also in a dry run
bad 2 "batch.count = 100000 with batch.sizes = uniform:4096 (1677721600000 rows): rank 0 would hold" \
  "$B" in.ini --set batch.count=100000 --set batch.sizes=uniform:4096
bad 3 "batch.count = 100000 with batch.sizes = uniform:4096 (1677721600000 rows): rank " \
  "$B" in.ini --set batch.count=100000 --set batch.sizes=uniform:4096 --dry-run

# -- tune.csr_schedule: grid problems refuse it; matrix inputs take it (the CSR
# product's schedule, per-operation kernels), so not with run.sync = grid
bad 2 "tune.csr_schedule = atomic (from --set) applies to problem.type = matrix only" \
  "$GOOD" in.ini --set tune.csr_schedule=atomic --set solver.name=cg
bad 2 "tune.csr_schedule = clc (from in.ini:10) applies to problem.type = matrix only" "$GOOD|[tune]|csr_schedule = clc"
M="[output]|file = out.h5|[problem]|type = matrix|matrix = $DATA/nos6.mtx|[solver]|name = cg"
bad 2 "tune.csr_schedule = static (from --set) schedules the CSR product of run.sync = launch; run.sync = grid (from in.ini:9)" \
  "$M|[run]|sync = grid" in.ini --set tune.csr_schedule=static
# the host backend ignores it: clc runs there, to the same bits as auto
d=$TMP/host-clc
mkdir "$d" && printf '%s\n' "$M" | tr '|' '\n' >"$d/in.ini" || fail "cannot make $d"
for s in auto clc; do
  (cd "$d" && coop_mpirun 1 "$COOPSOLVE" --backend host in.ini --output "$s.h5" --set tune.csr_schedule=$s \
    >"$s.out" 2>"$TMP/err" </dev/null) || { cat "$TMP/err"; fail "matrix input, host backend, tune.csr_schedule = $s"; }
  grep -E '^  (reason|iterations|residual|error) ' "$d/$s.out" >"$d/$s.sum"
done
[ "$(wc -l <"$d/auto.sum")" = 4 ] || { cat "$d/auto.out"; fail "host backend: no summary"; }
cmp -s "$d/auto.sum" "$d/clc.sum" || { diff "$d/auto.sum" "$d/clc.sum"; fail "host backend: tune.csr_schedule = clc changed the solve"; }
