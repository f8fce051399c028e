#!/bin/sh
# Every script of the source tree (a file starting with #!) is executable, so
# a dist tarball, which keeps the modes git gave its files, runs them as the
# README shows (bench/stencil.sh lost its run bit once).
. "$COOP_SRCDIR/tests/common.sh"
bad=
for f in "$COOP_SRCDIR"/quickstart.sh "$COOP_SRCDIR"/bench/* "$COOP_SRCDIR"/tests/*.sh "$COOP_SRCDIR"/tests/*/*.sh \
  "$COOP_SRCDIR"/jobscripts/* "$COOP_SRCDIR"/tools/*; do
  [ -f "$f" ] || continue
  [ "$(head -c 2 "$f")" = "#!" ] || continue
  [ -x "$f" ] || bad="$bad ${f#"$COOP_SRCDIR"/}"
done
[ -z "$bad" ] || fail "scripts without their run bit:$bad"
echo "every script is executable"
