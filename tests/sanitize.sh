#!/bin/sh
# The host test suite under AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer:
#   tests/sanitize.sh [BUILD_DIR]      (default: _build-sanitize beside configure)
# configures the source tree out of tree (--without-cuda, CC=mpicc, ASan and UBSan
# in CFLAGS and LDFLAGS) in BUILD_DIR, builds, and runs make check there. Any
# sanitizer report fails the test that met it: UBSan stops at the first error,
# and leaks are errors except those inside MPI, HDF5 and the libraries below them
# (tests/lsan.supp; never coopsolve's code). Prints make check's output, with its
# automake summary ("# PASS: N" ...) for CI to sum, and the time taken.
# Environment: MAKEFLAGS as usual (default -j2); COOP_FUZZ_SECONDS (default 0
# here: tests/fuzz.sh runs only its regression set, the fuzzing is done once
# in the plain make check); COOP_SANITIZE_LEAKS=0 skips the leak check, which
# costs about 1 s a process (0.34 s a 2-rank run without it, 1.3 s with).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/_build-sanitize}
start=$(date +%s)
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"

[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi) || {
  echo "sanitize: no $top/configure and autoreconf failed" >&2
  exit 1
}
mkdir -p "$build" && cd "$build" || exit 1
if [ ! -f Makefile ]; then
  "$top/configure" --without-cuda CC=mpicc CFLAGS="$san -g -O1" LDFLAGS="$san" \
    >configure.out 2>&1 || {
    tail -n 40 configure.out
    echo "sanitize: configure failed in $build (see config.log)" >&2
    exit 1
  }
fi

# The options reach every rank through mpirun's environment.
# fast_unwind_on_malloc=0: allocations in Open MPI's plugins, unloaded at
#   MPI_Finalize, keep frames of libmpi & co., which tests/lsan.supp names.
# use_tls=0: LSan crashes ("Tracer caught signal 11") scanning the thread-local
#   storage of those unloaded plugins (test_csr, test_stencil_krylov); not
#   scanning TLS can only add reports, never hide one.
# COOP_SANITIZE tells tests to skip what cannot hold under ASan (memory limits
# and measured peaks, which its shadow memory and redzones inflate).
export ASAN_OPTIONS="detect_leaks=${COOP_SANITIZE_LEAKS:-1}:fast_unwind_on_malloc=0:abort_on_error=0"
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0:use_tls=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export COOP_SANITIZE=1 COOP_FUZZ_SECONDS="${COOP_FUZZ_SECONDS:-0}"
: "${MAKEFLAGS:=-j2}"
export MAKEFLAGS

make >build.log 2>&1 || {
  tail -n 60 build.log
  echo "sanitize: build failed in $build" >&2
  exit 1
}
make check >check.log 2>&1
status=$?
cat check.log
if [ $status -ne 0 ]; then
  # the logs of the tests that failed, with the sanitizers' reports
  find . -name '*.trs' -exec grep -l -E ':test-result: (FAIL|ERROR|XPASS)' {} + |
    while read -r f; do
      echo "==== ${f%.trs}.log"
      tail -n 80 "${f%.trs}.log"
    done
fi
echo "sanitize: make check under ASan+UBSan in $build: exit $status, $(($(date +%s) - start)) s"
exit $status
