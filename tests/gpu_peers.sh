#!/bin/sh
# The multi-rank whole solve (tune.fused_halo: 2 ranks of one node, a GPU each,
# halos through CUDA IPC) when a rank fails it: one that never launches the
# kernel (COOP_FAULT=peer_stall, timeout shortened by COOP_PEER_TIMEOUT_S) ends
# the run with status 1, naming it, within the timeout and with no output; one
# that cannot map its peers' memory (COOP_FAULT=peer_map) makes every rank
# exchange halos from the host instead, same bits. A normal run reports
# halo_fused; heat at 2 ranks in grid mode never maps the peers' memory and
# gives the host's field. Skips without 2 GPUs.
. "$COOP_SRCDIR/tests/common.sh"
coop_require_gpu
GPUS=$("$COOPSOLVE" --version | sed -n 's/^GPUs visible: //p')
# (or the test hook COOP_PEERS_SHARED_GPU=1: two ranks on one GPU, time-sliced)
[ "${GPUS:-0}" -ge 2 ] || [ "${COOP_PEERS_SHARED_GPU:-}" = 1 ] ||
  { echo "SKIP: ${GPUS:-0} GPU visible, the multi-rank solve needs 2"; exit 77; }
command -v timeout >/dev/null 2>&1 || { echo "SKIP: no timeout(1)"; exit 77; }
coop_python
coop_tmpdir

# every coop_mpirun below ends within 60 s
REAL_MPIEXEC=$MPIEXEC
MPIEXEC=$TMP/mpiexec
printf '#!/bin/sh\nexec timeout -k 5 60 "%s" "$@"\n' "$REAL_MPIEXEC" >"$MPIEXEC"
chmod +x "$MPIEXEC"

GRID="$INPUTS/quickstart.ini --backend cuda --set run.sync=grid --set tune.halo=ipc --set output.monitor_every=0
  --set grid.nx=200 --set grid.ny=150"
FIXED="--set solver.rtol=0 --set solver.max_iter=300 --set solver.check_every=50"

solve() { # out, ranks, options...: status 0, stdout and stderr in $TMP/out.log, $TMP/out.err
  out=$1 n=$2
  shift 2
  coop_mpirun $n "$COOPSOLVE" "$@" --output "$TMP/$out.h5" >"$TMP/$out.log" 2>"$TMP/$out.err" ||
    { cat "$TMP/$out.log" "$TMP/$out.err"; fail "$out"; }
}

attr_of() { # file, /solver attribute
  $PY -c 'import h5py,sys; v=h5py.File(sys.argv[1])["solver"].attrs[sys.argv[2]]; v=v.decode() if isinstance(v,bytes) else v; print(v.item() if hasattr(v,"item") else v)' "$1" "$2"
}

# (a) rank 1 never launches: rank 0's kernel gives up after 2 s and names it
rc=0
t0=$(date +%s)
export COOP_FAULT=peer_stall:1 COOP_PEER_TIMEOUT_S=2
coop_mpirun 2 "$COOPSOLVE" $GRID --set solver.rtol=0 --set solver.max_iter=1000000 --output "$TMP/stall.h5" \
  >"$TMP/stall.log" 2>"$TMP/stall.err" || rc=$?
t1=$(date +%s)
unset COOP_FAULT COOP_PEER_TIMEOUT_S
[ $rc != 124 ] && [ $rc != 137 ] || { cat "$TMP/stall.err"; fail "peer_stall: hung (killed by timeout)"; }
[ $rc = 1 ] || { cat "$TMP/stall.err"; fail "peer_stall: exit status $rc, not 1"; }
grep -q 'waited more than 2 s for rank 1 at step' "$TMP/stall.err" ||
  { cat "$TMP/stall.err"; fail "peer_stall: no message naming rank 1 and the step"; }
for f in stall.h5 stall.h5.tmp stall.xmf stall.xmf.tmp; do
  [ ! -e "$TMP/$f" ] || fail "peer_stall: $f left behind"
done
echo "peer_stall: status 1 after $((t1 - t0)) s, rank 1 named, nothing written"

# (b) a normal run takes the fused kernel
solve fused 2 $GRID $FIXED
grep -q "inside the persistent kernel" "$TMP/fused.log" ||
  { cat "$TMP/fused.log" "$TMP/fused.err"; fail "fused: the multi-rank kernel did not run"; }
[ "$(attr_of "$TMP/fused.h5" halo_fused)" = 1 ] || fail "fused: /solver halo_fused is not 1"
echo "fused: halo_fused"

# rank 1 cannot map: both ranks exchange from the host, told once, same bits
export COOP_FAULT=peer_map:1
solve nomap 2 $GRID $FIXED
unset COOP_FAULT
[ "$(grep -c 'rank 1 could not map its peers' "$TMP/nomap.err")" = 1 ] ||
  { cat "$TMP/nomap.err"; fail "peer_map: no single note naming rank 1"; }
[ "$(attr_of "$TMP/nomap.h5" halo_fused)" = 0 ] || fail "peer_map: /solver halo_fused is not 0"
[ "$(attr_of "$TMP/nomap.h5" mode)" = grid ] || fail "peer_map: mode is not grid"
$PY "$H5CHECK" same "$TMP/fused.h5" "$TMP/nomap.h5" || fail "peer_map: host exchanges differ from the fused kernel"
echo "peer_map: host exchanges, same bits"

# heat at 2 ranks in grid mode: the host's field; it never maps the peers'
# memory (a failing map would say so)
HEAT="--set solver.name=heat --set solver.max_iter=300 --set output.every=70 --set solver.check_every=50"
solve heat-host 1 "$INPUTS/quickstart.ini" --backend host --set output.monitor_every=0 --set grid.nx=200 \
  --set grid.ny=150 $HEAT
export COOP_FAULT=peer_map:1
solve heat-grid 2 $GRID $HEAT
unset COOP_FAULT
! grep -q 'could not map' "$TMP/heat-grid.err" || { cat "$TMP/heat-grid.err"; fail "heat: mapped the peers' memory"; }
[ "$(attr_of "$TMP/heat-grid.h5" mode)" = grid ] || fail "heat: mode is not grid"
[ "$(attr_of "$TMP/heat-grid.h5" halo_fused)" = 0 ] || fail "heat: /solver halo_fused is not 0"
$PY "$H5CHECK" close "$TMP/heat-host.h5" "$TMP/heat-grid.h5" --rtol 1e-12 || fail "heat: grid at 2 ranks differs from host"
echo "gpu_peers: all cases passed"
