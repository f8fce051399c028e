#!/bin/sh
# Build the libFuzzer harnesses with clang and run them.
#   tests/fuzz/run.sh [-r] [-t SECONDS] [-j JOBS] BUILD_DIR [HARNESS...]
# HARNESS: config, mm (default: both). Each is built into BUILD_DIR (clang
# directly, not automake: -fsanitize=fuzzer,address,undefined) and then
#   -r          runs every input of tests/fuzz/corpus/H and tests/fuzz/crashes/H
#               once (the regression set), and
#   -t SECONDS  fuzzes for that long (default 60; 0: no fuzzing), starting from
#               the committed corpus; new inputs go to BUILD_DIR/corpus/H, so the
#               source tree is not written.
# Exit status 0 when nothing failed, 1 when an input crashed, leaked or broke a
# check of the harness (its path is printed: copy it to tests/fuzz/crashes/H/
# once fixed), 2 on a usage or build error. CC picks the compiler (default clang).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
regress=0 seconds=60 jobs=1
usage() { echo "usage: $0 [-r] [-t SECONDS] [-j JOBS] BUILD_DIR [config|mm]..." >&2; exit 2; }
while getopts rt:j: opt; do
  case $opt in
    r) regress=1 ;;
    t) seconds=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
mkdir -p "$1" || exit 2
build=$(cd "$1" && pwd)
shift
[ $# -gt 0 ] || set -- config mm
CC=${CC:-clang}
CFLAGS="-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
CPPFLAGS="-D_DEFAULT_SOURCE -I$top -I$top/src"

# The sources each harness links: only what it needs (neither needs MPI or HDF5).
sources() {
  case $1 in
    config) echo "src/io/config.c src/io/config_keys.c src/core/error.c" ;;
    mm) echo "src/io/mm.c src/core/error.c" ;;
    *) echo "unknown harness '$1'" >&2; return 1 ;;
  esac
}

build_one() {
  h=$1 src=$(sources "$1") || return 2
  files="$here/fuzz_$h.c"
  for s in $src; do files="$files $top/$s"; done
  # shellcheck disable=SC2086
  $CC $CFLAGS $CPPFLAGS -o "$build/fuzz_$h" $files -lm >"$build/fuzz_$h.build.log" 2>&1 || {
    cat "$build/fuzz_$h.build.log" >&2
    echo "fuzz: cannot build fuzz_$h with $CC" >&2
    return 2
  }
}

# Leaks are findings too; the sanitizers stop at the first error.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"
FUZZ_OPTS="-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1"

# Every input of the corpus and the crash collection, once each.
regress_one() {
  h=$1 list=$build/regress_$h.list
  find "$here/corpus/$h" "$here/crashes/$h" -type f 2>/dev/null | sort >"$list"
  n=$(wc -l <"$list")
  [ "$n" -gt 0 ] || { echo "fuzz: no inputs for $h" >&2; return 1; }
  # shellcheck disable=SC2086
  if (cd "$build" && xargs "$build/fuzz_$h" $FUZZ_OPTS <"$list") >"$build/regress_$h.log" 2>&1; then
    echo "fuzz: $h: $n inputs of the regression set pass"
    return 0
  fi
  tail -n 60 "$build/regress_$h.log" >&2
  bad=$(sed -n 's/^Running: //p' "$build/regress_$h.log" | tail -n 1)
  echo "fuzz: $h: the regression set fails${bad:+ on $bad} (log: $build/regress_$h.log)" >&2
  return 1
}

fuzz_one() {
  h=$1 work=$build/corpus/$h art=$build/artifacts/$h
  mkdir -p "$work" "$art" || return 2
  rm -f "$art"/* "$build"/fuzz-*.log
  par=
  [ "$jobs" -le 1 ] || par="-fork=$jobs -ignore_crashes=0"
  # shellcheck disable=SC2086
  (cd "$build" && "$build/fuzz_$h" $FUZZ_OPTS $par -dict="$here/$h.dict" -max_total_time="$seconds" \
    -artifact_prefix="$art/" "$work" "$here/corpus/$h") >"$build/fuzz_$h.log" 2>&1
  rc=$?
  found=$(find "$art" -type f | head -n 20)
  if [ $rc -eq 0 ] && [ -z "$found" ]; then
    echo "fuzz: $h: ${seconds}s without a finding ($(grep -h 'stat::number_of_executed_units' \
      "$build/fuzz_$h.log" "$build"/fuzz-*.log 2>/dev/null | awk '{ n += $2 } END { print n + 0 }') runs)"
    return 0
  fi
  grep -h -A 40 -E '^==[0-9]+==ERROR|runtime error|^fuzz_|deadly signal' "$build/fuzz_$h.log" \
    "$build"/fuzz-*.log 2>/dev/null | head -n 80 >&2
  echo "fuzz: $h: exit status $rc (log: $build/fuzz_$h.log)" >&2
  for f in $found; do echo "fuzz: $h: crash input: $f" >&2; done
  return 1
}

status=0
for h in "$@"; do
  build_one "$h" || exit 2
  if [ $regress -eq 1 ]; then regress_one "$h" || status=1; fi
  if [ "$seconds" -gt 0 ]; then fuzz_one "$h" || status=1; fi
done
exit $status
