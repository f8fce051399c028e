#!/bin/sh
# The fuzz harnesses of the input-file parser and the Matrix Market reader
# (tests/fuzz): built with clang's libFuzzer, they run every input of the
# committed corpus and of tests/fuzz/crashes once (each crash ever found stays a
# test), then fuzz for COOP_FUZZ_SECONDS each (default 20; 0: regression only).
# Skips (77) without a clang that has libFuzzer (Debian: clang libclang-rt-dev).
. "$COOP_SRCDIR/tests/common.sh"
CC=${COOP_FUZZ_CC:-clang}
export CC
command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: no $CC (Debian: clang libclang-rt-dev)"; exit 77; }
coop_tmpdir
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' >"$TMP/t.c"
"$CC" -fsanitize=fuzzer,address,undefined -o "$TMP/t" "$TMP/t.c" >"$TMP/cc.log" 2>&1 || {
  cat "$TMP/cc.log"
  echo "SKIP: $CC cannot build a libFuzzer harness (Debian: libclang-rt-dev)"
  exit 77
}
# The harnesses are not the sanitized build's code: its options are not theirs.
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
# Built in the test's own temporary folder: nothing is left for distclean.
# A failing input is kept in the build tree, where the message says.
sh "$COOP_SRCDIR/tests/fuzz/run.sh" -r -t "${COOP_FUZZ_SECONDS:-20}" "$TMP/build" && exit 0
if [ -n "$(ls -A "$TMP/build/artifacts" 2>/dev/null)" ]; then
  rm -rf "$COOP_BUILDDIR/fuzz-artifacts" && cp -R "$TMP/build/artifacts" "$COOP_BUILDDIR/fuzz-artifacts" &&
    echo "fuzz: the failing inputs are kept in $COOP_BUILDDIR/fuzz-artifacts"
fi
exit 1
