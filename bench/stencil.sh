#!/usr/bin/env bash
# Stencil sweeps of the cuda backend, every mode (launch, graph, grid) side by
# side on the same problem, read against the GPU's own ceilings measured in the
# same call (bench/devlimits.cu: copy bandwidth, grid.sync() cost, launch cost).
#   bench/stencil.sh BUILD_DIR OUT_DIR [quick|full|ranks|PATTERN]
# quick (default): 2D fp32 and fp64 at 1024^2 and 8192^2, Laplace, residual
#   every sweep and every 100, 1 GPU; 2 ranks on 4096^2 fp32, ghost 1 and 8,
#   mpi and ipc halos (and nccl in builds with NCCL) (and the 1-GPU grid-mode 4096^2 fp32 row, the strong
#   scaling reference).
# full: 2D fp32 and fp64 at 1024^2 .. 16384^2, laplace and sine, residual
#   every 1 and 100 sweeps, 3D fp64 512^3, 1 GPU; and the 2-rank rows.
# ranks: the 2-rank rows of full only (2 GPUs), Laplace, halos mpi (host
#   staged unless MPI is CUDA-aware), ipc (GPU to GPU) and, in builds with
#   NCCL, nccl: strong (same grid)
#   fp64 1024^2 and 4096^2 and fp32 4096^2 at ghost 1, 2, 4, 8, fp64 16384^2
#   at ghost 1 and 8, all with the residual every 100 sweeps, and fp64 4096^2
#   every sweep at ghost 1 and 8; weak (grid doubled along y) fp64 1024 x 2048
#   at ghost 1, 2, 4, 8 and 8192 x 16384 at ghost 1 and 8; 3D fp64 512^3 at
#   ghost 1 and 2.
# PATTERN: the rows of full whose name matches the extended regex PATTERN
#   (names like 2d-4096-fp32-laplace-c100-r2-strong-g8-ipc-grid,
#   2d-1024-fp64-sine-c1-r1-g1-launch; 'r1-' = every 1-GPU row).
# STENCIL_SET="key=value ..." adds those --set options to every run (in the
# Command line of the header), e.g. tune.overlap=false for the baseline.
# STENCIL_HALOS (default "mpi ipc", plus nccl where the build has it) sets the
# 2-rank halo transports. STENCIL_DRY_RUN=1 lists the rows and runs nothing. STENCIL_TIMEOUT (s, default
# 180) bounds one coopsolve run; STENCIL_SWEEPS (1000) and STENCIL_SWEEPS_3D
# (200) set the sweeps per run.
#
# Each run: solver.max_iter sweeps, rtol = atol = dtol = 0 (never stops early),
# no monitor, no fields, no XDMF. A run that fails becomes a "skipped: MESSAGE"
# row (its log tail on stderr) and the bench goes on; 2-rank rows are skipped
# with fewer than 2 GPUs. Progress goes to stderr; the results file (header
# block and table) to stdout and OUT_DIR/table.md. OUT_DIR/runs.tsv collects
# the runs of every call into OUT_DIR: a 2-rank row whose 1-GPU reference did
# not run in this call takes it from an earlier call there (so full can be run
# in pieces, e.g. 'r1-' then ranks, within a per-command time limit).
set -uo pipefail
# shellcheck source=bench/run_status.sh
. "$(dirname "$0")/run_status.sh"
usage="usage: bench/stencil.sh BUILD_DIR OUT_DIR [quick|full|ranks|PATTERN]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
dry=${STENCIL_DRY_RUN:-0}
build_arg=$1 out_arg=$2 sel=${3:-quick}
src=$(cd "$(dirname "$0")/.." && pwd)
tmo=${STENCIL_TIMEOUT:-180}
extra=()
for kv in ${STENCIL_SET:-}; do extra+=(--set "$kv"); done
sweeps2d=${STENCIL_SWEEPS:-1000}
sweeps3d=${STENCIL_SWEEPS_3D:-200}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

halos=${STENCIL_HALOS:-mpi ipc}
[ -n "${STENCIL_HALOS:-}" ] || ! "$build_arg/coopsolve" --version 2>/dev/null | grep -q '^NCCL: yes' ||
  halos="$halos nccl"

# ---- the rows: "np scaling ghost halo check rhs prec dim nx ny nz mode"
plan=()
cfg() { # np scaling ghost halo check rhs prec dim nx ny nz: one row per mode
  local m
  for m in launch graph grid; do plan+=("$* $m"); done
}
one_rank() { # precs sizes rhss checks (2D, n^2)
  local p n r c
  for p in $1; do for n in $2; do for r in $3; do for c in $4; do
    cfg 1 - 1 - "$c" "$r" "$p" 2 "$n" "$n" -
  done; done; done; done
}
one_rank_3d() { # rhss checks (fp64, 512^3)
  local r c
  for r in $1; do for c in $2; do cfg 1 - 1 - "$c" "$r" fp64 3 512 512 512; done; done
}
two_ranks() { # strong|weak prec n rhs check ghosts halos [3d]
  local s=$1 p=$2 n=$3 r=$4 c=$5 g h ny=$3
  [ "$s" = weak ] && ny=$((2 * n))
  for g in $6; do for h in $7; do
    if [ "${8:-}" = 3d ]; then cfg 2 "$s" "$g" "$h" "$c" "$r" "$p" 3 "$n" "$ny" "$n"
    else cfg 2 "$s" "$g" "$h" "$c" "$r" "$p" 2 "$n" "$ny" -; fi
  done; done
}
plan_ranks() {
  # every ghost width where the halo is a large part of a sweep; 1 and 8 on
  # the large grids (their halo is small, and their runs are the long ones)
  local G="1 2 4 8" H=$halos
  two_ranks strong fp64 1024 laplace 100 "$G" "$H"
  two_ranks strong fp64 4096 laplace 100 "$G" "$H"
  two_ranks strong fp64 16384 laplace 100 "1 8" "$H"
  two_ranks strong fp32 4096 laplace 100 "$G" "$H"
  two_ranks strong fp64 4096 laplace 1 "1 8" "$H"
  two_ranks strong fp32 4096 laplace 1 "1 8" "$H"
  two_ranks weak fp64 1024 laplace 100 "$G" "$H"
  two_ranks weak fp64 8192 laplace 100 "1 8" "$H"
  two_ranks strong fp64 512 laplace 100 "1 2" "$H" 3d
}
plan_full() {
  one_rank "fp32 fp64" "1024 2048 4096 8192 16384" "laplace sine" "1 100"
  one_rank_3d "laplace sine" "1 100"
  plan_ranks
}
row_name() { # the fields of a row
  local np=$1 s=$2 g=$3 h=$4 c=$5 r=$6 p=$7 dim=$8 nx=$9 ny=${10} nz=${11} m=${12} size
  if [ "$dim" = 3 ]; then
    size=3d-$nx; [ "$nx" = "$ny" ] && [ "$ny" = "$nz" ] || size=3d-${nx}x${ny}x${nz}
  else
    size=2d-$nx; [ "$nx" = "$ny" ] || size=2d-${nx}x${ny}
  fi
  if [ "$np" = 1 ]; then echo "$size-$p-$r-c$c-r1-g$g-$m"
  else echo "$size-$p-$r-c$c-r$np-$s-g$g-$h-$m"; fi
}

case $sel in
  quick)
    one_rank "fp32 fp64" "1024 8192" laplace "1 100"
    plan+=("1 - 1 - 100 laplace fp32 2 4096 4096 - grid")
    two_ranks strong fp32 4096 laplace 100 "1 8" "$halos" ;;
  full) plan_full ;;
  ranks) plan_ranks ;;
  *)
    plan_full
    kept=()
    for r in "${plan[@]}"; do
      # shellcheck disable=SC2086
      row_name $r | grep -Eq -- "$sel" && kept+=("$r")
    done
    [ ${#kept[@]} -gt 0 ] || { echo "stencil.sh: no row of full matches '$sel'" >&2; exit 2; }
    plan=("${kept[@]}") ;;
esac

if [ "$dry" = 1 ]; then
  # shellcheck disable=SC2086
  for r in "${plan[@]}"; do row_name $r; done
  echo "${#plan[@]} rows" >&2
  exit 0
fi
build=$(cd "$build_arg" && pwd) || { echo "$usage" >&2; exit 2; }
mkdir -p "$out_arg" && out=$(cd "$out_arg" && pwd) || exit 2

py=python3
$py -c 'import h5py, numpy' 2>/dev/null || py=/usr/bin/python3
$py -c 'import h5py, numpy' || { echo "stencil.sh: no python3 with h5py" >&2; exit 1; }
[ -x "$build/coopsolve" ] || { echo "stencil.sh: no $build/coopsolve" >&2; exit 1; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') || gpus=0
call=$(date -u +%Y%m%dT%H%M%S)-$$
t_call=$(date +%s)
tsv=$out/runs.tsv
[ -f "$tsv" ] || printf 'call\tname\tnp\tscaling\tghost\thalo\tcheck\trhs\tprec\tdim\tnx\tny\tnz\tmode\tsweeps\tstatus\th5\tlog\twall_s\tmessage\n' >"$tsv"

# ---- ceilings of GPU 0 (and of GPU 1 for the header, when there)
limits=ok
if nvcc -O2 -arch=sm_90 -o "$out/devlimits" "$src/bench/devlimits.cu" >"$out/devlimits-build.log" 2>&1; then
  "$out/devlimits" 0 >"$out/devlimits.txt" 2>"$out/devlimits.err" || limits=failed
  [ "$gpus" -ge 2 ] && { "$out/devlimits" 1 >"$out/devlimits-gpu1.txt" 2>>"$out/devlimits.err" || true; }
else
  limits="did not compile"
fi
if [ "$limits" = ok ]; then cat "$out/devlimits.txt" >&2
else
  echo "stencil.sh: devlimits $limits (ratio columns left blank):" >&2
  tail -n 20 "$out/devlimits-build.log" "$out/devlimits.err" >&2 2>/dev/null
  : >"$out/devlimits.txt"
fi

# ---- the runs
skipped_ranks=0
k=0
for r in "${plan[@]}"; do
  # shellcheck disable=SC2086
  set -- $r
  np=$1 scal=$2 g=$3 h=$4 c=$5 rhs=$6 p=$7 dim=$8 nx=$9 ny=${10} nz=${11} m=${12}
  # shellcheck disable=SC2086
  name=$(row_name $r)
  k=$((k + 1))
  if [ "$np" -gt "$gpus" ]; then skipped_ranks=$((skipped_ranks + 1)); continue; fi
  sweeps=$sweeps2d
  opts=(--set grid.dim="$dim" --set grid.nx="$nx" --set grid.ny="$ny")
  if [ "$dim" = 3 ]; then sweeps=$sweeps3d; opts+=(--set grid.nz="$nz"); fi
  [ "$np" -gt 1 ] && opts+=(--set tune.halo="$h")

  h5=$out/$name.h5 log=$out/$name.log
  rm -f "$h5"
  printf '[%d/%d] %s ' "$k" "${#plan[@]}" "$name" >&2
  t0=$(date +%s.%N)
  timeout -k 10 "$tmo" mpirun --bind-to none -np "$np" "$build/coopsolve" "$src/inputs/quickstart.ini" \
    --backend cuda --set run.sync="$m" --set grid.ghost="$g" --set solver.precision="$p" \
    --set solver.check_every="$c" --set problem.type="$rhs" "${opts[@]}" \
    --set solver.max_iter="$sweeps" --set solver.rtol=0 --set solver.atol=0 --set solver.dtol=0 \
    --set output.monitor_every=0 --set output.fields=false --set output.xdmf=false \
    "${extra[@]}" --output "$h5" </dev/null >"$log" 2>&1
  rc=$?
  wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  run_status $rc "$log" "$h5" "$tmo"
  if [ $status = ok ]; then echo "ok, ${wall} s" >&2
  else
    echo "skipped: $msg (${wall} s); log tail:" >&2
    tail -n 15 "$log" | sed 's/^/    /' >&2
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$call" "$name" "$np" "$scal" "$g" "$h" "$c" "$rhs" "$p" "$dim" "$nx" "$ny" "$nz" "$m" "$sweeps" \
    "$status" "$h5" "$log" "$wall" "$msg" >>"$tsv"
done
[ $skipped_ranks -gt 0 ] &&
  printf '%s\t(2-rank rows: %d)\t2\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tnogpu\t-\t-\t0\t%d GPU(s) found, 2 needed\n' \
    "$call" "$skipped_ranks" "$gpus" >>"$tsv"

# ---- the table. The grid-mode runs' block counts that devlimits did not
# measure yet are measured now (same GPU, same call).
formatter() { # subcommand: blocks | table
  "$py" - "$1" "$tsv" "$call" "$out" <<'PYEOF'
import csv, os, re, sys
import h5py

what, tsv, call, out = sys.argv[1:5]
DEFAULT_BLOCKS = 1056


def read_limits(path):
    d = {}
    try:
        with open(path) as fh:
            for line in fh:
                w = line.split()
                if len(w) >= 2 and re.fullmatch(r"[a-z_0-9]+", w[0]):
                    try:
                        d[w[0]] = float(w[1])
                    except ValueError:
                        pass
                if line.startswith("device "):
                    d["device"] = line.strip()
                m = re.match(r"grid_sync_us \S+ \((\d+) blocks", line)
                if m:
                    d["grid_sync_blocks"] = int(m.group(1))
    except OSError:
        pass
    return d


lim = read_limits(os.path.join(out, "devlimits.txt"))
for k, v in read_limits(os.path.join(out, "devlimits-extra.txt")).items():
    if k.startswith("sync_us_"):
        lim.setdefault(k, v)
lim1 = read_limits(os.path.join(out, "devlimits-gpu1.txt"))
copy = lim.get("copy_gbs")


def text(v):
    if isinstance(v, bytes):
        return v.decode()
    if hasattr(v, "shape") and v.shape == ():
        v = v[()]
        return v.decode() if isinstance(v, bytes) else str(v)
    return str(v)


def blocks_of(rec, attrs):
    for key in ("blocks", "grid_blocks", "persistent_blocks"):
        if key in attrs:
            try:
                return int(attrs[key])
            except (TypeError, ValueError):
                pass
    try:
        with open(rec["log"], errors="replace") as fh:
            m = re.findall(r"(\d+) persistent blocks|persistent blocks[ =:]+(\d+)", fh.read())
        m = ["".join(x) for x in m]
        return int(m[-1]) if m else None
    except OSError:
        return None


def load(rec):
    """The figures of one run (rec['status'] == 'ok'), or a message."""
    try:
        with h5py.File(rec["h5"], "r") as f:
            s = f["solver"].attrs
            shape = [int(x) for x in f["grid"].attrs["shape"]]
            mode = text(s["mode"])
            prec = text(s["precision"]) if "precision" in s else rec["prec"]
            reason = text(s["reason"]) if "reason" in s else ""
            iters = int(s["iterations"])
            has_steps = "steps" in s
            steps = int(s["steps"]) if has_steps else iters
            t = float(s["solve_time"])
            blocks = blocks_of(rec, s) if mode == "grid" else None
    except Exception as e:  # a file without the attributes: skip the row
        return None, f"{rec['h5']}: {type(e).__name__}: {e}"
    if steps <= 0 or t <= 0:
        return None, f"no sweeps timed ({steps} sweeps, {t} s)"
    pts = 1
    for n in shape:
        pts *= n
    return dict(mode=mode, prec=prec, reason=reason, iters=iters, steps=steps,
                has_steps=has_steps, t=t, pts=pts, shape=shape, blocks=blocks), None


rows = []
with open(tsv, newline="") as fh:
    for rec in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
        rows.append(rec)
this = [r for r in rows if r["call"] == call]
prev = [r for r in rows if r["call"] != call]
figs = {}
for r in this:
    if r["status"] == "ok":
        fig, msg = load(r)
        if fig is None:
            r["status"], r["message"] = "skipped", msg
        else:
            figs[id(r)] = fig


def group(r):  # the configuration, mode left out
    return tuple(r[k] for k in ("np", "scaling", "ghost", "halo", "check", "rhs", "prec",
                                "dim", "nx", "ny", "nz"))


grid_blocks = {}
for r in this:
    f = figs.get(id(r))
    if f and f["mode"] == "grid" and f["blocks"]:
        grid_blocks[group(r)] = f["blocks"]

if what == "blocks":
    need = sorted({b for b in grid_blocks.values() if f"sync_us_{b}" not in lim})
    print(" ".join(map(str, need)))
    sys.exit(0)


def barrier(r):
    b = grid_blocks.get(group(r))
    assumed = b is None
    if assumed:
        b = DEFAULT_BLOCKS
    us = lim.get(f"sync_us_{b}")
    if us is None and lim.get("grid_sync_blocks") == b:  # a devlimits without sync_us_N
        us = lim.get("grid_sync_us")
    return us, b, assumed


# 1-GPU grid-mode references for the scaling column: this call first, then the
# latest earlier call in OUT_DIR
ref = {}


def ref_key(r, ny):
    return (r["dim"], r["nx"], str(ny), r["nz"], r["prec"], r["rhs"], r["check"])


for r in prev:
    if r["np"] == "1" and r["status"] == "ok" and r["mode"] == "grid":
        fig, _ = load(r)
        if fig and fig["mode"] == "grid":
            ref[ref_key(r, r["ny"])] = (1e6 * fig["t"] / fig["steps"], True)
for r in this:
    f = figs.get(id(r))
    if r["np"] == "1" and r["mode"] == "grid" and f and f["mode"] == "grid":
        ref[ref_key(r, r["ny"])] = (1e6 * f["t"] / f["steps"], False)


def num(x, small=1):
    if x is None:
        return ""
    return f"{x:.{small + 1}f}" if x < 10 else f"{x:.{small}f}"


def case(r):
    if r["name"].startswith("("):
        return r["name"]
    return r["name"].split("-c")[0]


header = ("| case | ranks | mode | ghost | halo | check | sweeps | solve s | us/sweep | Gpts/s | "
          "GB/s | of copy BW | barrier us | sweep/barrier | floor us | scaling eff |")
lines = [header, "|" + " --- |" * header.count(" | ") + " --- |"]
n_ok = n_skip = 0
from_earlier = False
for r in this:
    f = figs.get(id(r))
    np_ = int(r["np"])
    if f is None:
        n_skip += int(re.search(r"(\d+)\)", r["name"]).group(1)) if r["status"] == "nogpu" else 1
        lines.append(f"| {case(r)} | {r['np']} | {r['mode']} | {r['ghost']} | {r['halo']} | "
                     f"{r['check']} | skipped: {r['message']} | | | | | | | | | |")
        continue
    n_ok += 1
    es = 4 if f["prec"] == "fp32" else 8
    vals = 2 if r["rhs"] == "laplace" else 3
    bytes_sweep = vals * es * f["pts"]
    us = 1e6 * f["t"] / f["steps"]
    gpts = f["pts"] * f["steps"] / f["t"] / 1e9
    gbs = bytes_sweep * f["steps"] / f["t"] / 1e9
    mode = f["mode"] if f["mode"] == r["mode"] else f"{f['mode']} (asked {r['mode']})"
    sweeps = str(f["steps"]) + ("" if f["has_steps"] else "*")
    if f["reason"] and f["reason"] != "diverged_its":
        sweeps += f" ({f['reason']})"
    of_copy = floor = ""
    if copy:
        of_copy = f"{100 * gbs / (np_ * copy):.0f}%"
        floor = num(1e6 * bytes_sweep / (np_ * copy * 1e9))
    bus, b, assumed = barrier(r)
    bar = ratio = ""
    if bus:
        bar = f"{bus:.2f} ({b}{'?' if assumed else ''})"
        ratio = num(us / bus)
    eff = ""
    if np_ > 1:
        ny = int(r["ny"]) // 2 if r["scaling"] == "weak" else int(r["ny"])
        t1 = ref.get(ref_key(r, ny))
        if t1:
            e = t1[0] / us if r["scaling"] == "weak" else t1[0] / (np_ * us)
            eff = f"{r['scaling']} {100 * e:.0f}%" + ("+" if t1[1] else "")
            from_earlier |= t1[1]
    lines.append(f"| {case(r)} | {r['np']} | {mode} | {r['ghost']} | {r['halo']} | {r['check']} | "
                 f"{sweeps} | {f['t']:.3f} | {num(us)} | {gpts:.2f} | {gbs:.0f} | {of_copy} | {bar} | "
                 f"{ratio} | {floor} | {eff} |")

env = os.environ.get
head = ["# Stencil sweeps, cuda backend: launch, graph and grid modes side by side", ""]
head.append(f"- Date: {env('ST_DATE', '')}")
gl = [g for g in env("ST_GPUS", "").splitlines() if g.strip()]
if gl:
    head.append(f"- GPUs: {len(gl)}: " + "; ".join(gl))
for key, label in (("ST_VERSION", "Build"), ("ST_MPI", "MPI"), ("ST_NVCC", "nvcc")):
    if env(key):
        head.append(f"- {label}: {env(key)}")
head.append(f"- Command: `{env('ST_CMD', '')}` ({env('ST_RUNS', '?')} runs: {n_ok} timed, "
            f"{n_skip} skipped; {env('ST_WALL', '?')} s wall in all)")
head.append(f"- Each run: {env('ST_SWEEPS', '')} sweeps, solver.rtol = atol = dtol = 0 (never stops "
            "early), no fields, no monitor; one rank per GPU.")
head.append("")
if copy:
    head.append("Ceilings measured in the same call (`bench/devlimits.cu` on "
                + lim.get("device", "device 0") + "):")
    head += ["", "| what | figure |", "| --- | --- |"]
    c1 = f" (GPU 1: {lim1['copy_gbs']:.0f} GB/s)" if "copy_gbs" in lim1 else ""
    head.append(f"| device-to-device cudaMemcpy, read + written | {copy:.0f} GB/s{c1} |")
    if "grid_sync_us" in lim:
        head.append(f"| grid.sync(), all resident blocks ({lim.get('grid_sync_blocks', '?')}) of "
                    f"256 threads | {lim['grid_sync_us']:.2f} us |")
    for b in sorted(int(k[8:]) for k in lim if re.fullmatch(r"sync_us_\d+", k)):
        head.append(f"| grid.sync(), {b} blocks | {lim[f'sync_us_{b}']:.2f} us |")
    if "launch_us" in lim:
        head.append(f"| empty kernel launch in a stream loop | {lim['launch_us']:.2f} us |")
else:
    head.append("Ceilings: devlimits did not run in this call; the ratio columns are blank.")
head += ["",
         "Columns: sweeps = sweeps executed (/solver `steps`; `*`: /solver `iterations`, the file "
         "has no `steps`); us/sweep = solve time / sweeps; GB/s counts the bytes a sweep must move: "
         "2 values per point with a zero right-hand side (laplace: read u, write unew; f is never "
         "read), 3 with a source (sine: u, f, unew), fp32 4 and fp64 8 bytes, residual checks "
         "included in the time; \"of copy BW\" = GB/s over the copy ceiling x ranks (one GPU per "
         "rank); barrier us = one grid.sync() at the block count of the grid-mode run of the same "
         "configuration, in parentheses (`?`: unknown, 1056 taken); sweep/barrier = us/sweep over "
         "it; floor us = a sweep's bytes per GPU over the copy ceiling; scaling eff (2 ranks): "
         "strong T1/(2 T2), weak T1/T2 (grid doubled along y), T1 = us/sweep of the 1-GPU grid-mode "
         "run of the same size, precision, problem and check interval"
         + (" (`+`: T1 from an earlier call into the same OUT_DIR)" if from_earlier else "")
         + ". Case: dimension, points per axis (2 numbers: nx x ny), precision, problem.",
         ""]
print("\n".join(head + lines))
PYEOF
}
extra=$(formatter blocks) || extra=
if [ -n "$extra" ] && [ "$limits" = ok ]; then
  echo "devlimits: grid.sync at the block counts the grid mode used: $extra" >&2
  # shellcheck disable=SC2086
  "$out/devlimits" 0 $extra >"$out/devlimits-extra.txt" 2>>"$out/devlimits.err" || true
fi
ST_DATE="$(date -u '+%Y-%m-%d %H:%M UTC')" \
ST_GPUS="$(nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
  sed 's/^\([0-9]*\), \(.*\), \(.*\), \(.*\)$/GPU \1 \2 (driver \3, \4)/')" \
ST_VERSION="$("$build/coopsolve" --version 2>/dev/null | head -n 1)" \
ST_MPI="$(mpirun --version 2>/dev/null | head -n 1)" \
ST_NVCC="$(nvcc --version 2>/dev/null | grep -i release | sed 's/.*release //')" \
ST_CMD="${STENCIL_SET:+STENCIL_SET='$STENCIL_SET' }bench/stencil.sh $build $out $sel" ST_RUNS="${#plan[@]}" \
ST_WALL="$(($(date +%s) - t_call))" ST_SWEEPS="$sweeps2d (3D: $sweeps3d)" \
  formatter table >"$out/table.md" || { echo "stencil.sh: the table failed" >&2; exit 1; }
cat "$out/table.md"
