#!/bin/sh
# The layers (docs/design.md, "Layers"): every #include "..." in src/,
# solvers/ and kernels/ points down a layer or stays in its own folder, and no
# file reaches itself through its includes. Fails naming FILE:LINE for each
# include that points up, across a boundary the layers forbid, or at no folder,
# and each include cycle; with a build at hand (COOP_BUILDDIR), also each
# object that takes a coop_ symbol from a folder it may not include.
#
# rank 3: driver                     src/driver
# rank 2: problem | solvers          src/problem, solvers (siblings: neither
#                                    includes the other; solvers/FAMILY/ may
#                                    include solvers/*.h, the shared services,
#                                    but the shared files no family and no
#                                    family another, save ALLOW below)
# rank 1: kernels                    kernels
# rank 0: io -> core                 src/io may include src/core, not the reverse
# anywhere: coop_build.h (configure's output)
src=${COOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 1

# Includes across solvers' families, each with its reason: "FROM TO" folder pairs.
ALLOW=""
# Objects that may use every family of their layer: the registry names each
# method's type (declared in solvers/solver.h), the one table above them all.
TOP="solvers/registry.o"

RULES='
function folder(p,   a) { # the folder of a path, as the layers name it
  if (p ~ /^src\/(core|io|problem|driver)\//) { sub(/^src\//, "", p) }
  if (p ~ /^solvers\/[^\/]+\//) { split(p, a, "/"); return "solvers/" a[2] }
  split(p, a, "/"); return a[1]
}
function rank(f) {
  if (f == "core" || f == "io") return 0
  if (f == "kernels") return 1
  if (f == "problem" || f ~ /^solvers/) return 2
  if (f == "driver") return 3
  return -1
}
function path(t) { # the file an include names, from the include root
  if (t ~ /^(core|io|problem|driver)\//) return "src/" t
  return t
}
function ok(from, to,   i) {
  if (from == to) return 1
  if (rank(to) < rank(from)) return 1
  if (rank(to) > rank(from)) return 0
  if (from == "io" && to == "core") return 1
  if (from ~ /^solvers\// && to == "solvers") return 1
  for (i = 1; i <= nallow; i += 2) if (al[i] == from && al[i + 1] == to) return 1
  return 0
}
BEGIN { nallow = split(allow, al, " ") }
'

files=$(find src solvers kernels -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
[ -n "$files" ] || { echo "layers.sh: no sources under $src" >&2; exit 1; }

# one line an include: FILE LINE TARGET
bad=0
grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files |
  sed 's/^\([^:]*\):\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2 \3/' |
  awk -v allow="$ALLOW" "$RULES"'
function visit(u,   i, v) { # depth-first: 1 grey (on the path), 2 black
  state[u] = 1; stack[++depth] = u
  for (i = 1; i <= nout[u]; i++) {
    v = out[u, i]
    if (state[v] == 1) cycle(v)
    else if (!state[v]) visit(v)
  }
  state[u] = 2; depth--
}
function cycle(v,   i, s) {
  for (i = depth; i > 0 && stack[i] != v; i--) {}
  s = v
  for (i = i + 1; i <= depth; i++) s = s " -> " stack[i]
  printf "layers.sh: include cycle: %s -> %s\n", s, v
  bad = 1
}
{
  file = $1; line = $2; t = $3
  if (t == "coop_build.h") next
  if (t !~ /\//) {
    printf "%s:%s: includes \"%s\", which names no folder\n", file, line, t; bad = 1; next
  }
  from = folder(file); to = folder(path(t))
  if (rank(to) < 0) {
    printf "%s:%s: includes \"%s\", in no layer\n", file, line, t; bad = 1; next
  }
  if (!ok(from, to)) {
    printf "%s:%s: includes \"%s\": %s (rank %d) may not include %s (rank %d)\n",
      file, line, t, from, rank(from), to, rank(to)
    bad = 1
  }
  out[file, ++nout[file]] = path(t); node[file] = 1
}
END {
  for (f in node) if (!state[f]) visit(f)
  exit bad
}' || bad=1

# What the objects use, where a build is at hand: each coop_ function or datum
# an object of src/, solvers/ or kernels/ takes from another must come from a
# folder it may include (a call needs no include to point up: core/halo.c once
# called kernels/halo_nccl.c through a header held in core). coop_ names only:
# C++ template instances are defined alike in many objects.
b=${COOP_BUILDDIR:-}
if [ -n "$b" ] && command -v nm >/dev/null 2>&1 && [ -d "$b/kernels" ]; then
  # objects of sources this tree has (a build folder keeps those of moved files)
  objs=$(cd "$b" && find src solvers kernels -name '*.o' 2>/dev/null | sort |
    while read -r o; do [ -e "$src/${o%.o}.c" ] || [ -e "$src/${o%.o}.cu" ] && echo "$o"; done)
  if [ -n "$objs" ]; then
    (cd "$b" && nm -A -P $objs) |
      awk -v allow="$ALLOW" -v top="$TOP" "$RULES"'
{ f = $1; sub(/:$/, "", f)
  if ($2 !~ /^coop_/) next
  if ($3 == "U") use[f, $2] = 1
  else if ($3 ~ /^[TDBRGSCVW]$/) def[$2] = f }
END {
  for (k in use) {
    split(k, ka, SUBSEP)
    if (!(ka[2] in def)) continue
    from = folder(ka[1]); to = folder(def[ka[2]])
    if (index(" " top " ", " " ka[1] " ") && to ~ /^solvers/) continue
    if (!ok(from, to)) {
      printf "%s uses %s from %s: %s may not use %s\n", ka[1], ka[2], def[ka[2]], from, to
      bad = 1
    }
  }
  exit bad
}' || bad=1
  fi
fi
exit $bad
