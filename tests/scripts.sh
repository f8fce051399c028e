#!/bin/sh
# Every script of the source tree (a file starting with #!) is executable, so
# a dist tarball, which keeps the modes git gave its files, runs them as the
# docs show (bench/stencil.sh lost its run bit once). And every relative link
# of README.md and docs/*.md names a file that is there, so a page moved or
# left out of EXTRA_DIST shows up here (make distcheck runs this on the tarball).
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

bad=
for page in "$COOP_SRCDIR"/README.md "$COOP_SRCDIR"/docs/*.md; do
  [ -f "$page" ] || continue
  dir=$(dirname "$page")
  # markdown links [text](target): the target without its #anchor
  for t in $(grep -o '](\([^) ]*\))' "$page" | sed 's/^](\(.*\))$/\1/; s/#.*//'); do
    case $t in '' | http://* | https://* | mailto:*) continue ;; esac
    [ -e "$dir/$t" ] || bad="$bad ${page#"$COOP_SRCDIR"/}:$t"
  done
done
[ -z "$bad" ] || fail "links to files that are not there:$bad"
echo "every link of the docs names a file"
