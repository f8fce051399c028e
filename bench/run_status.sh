# Sourced by the benchmark drivers (bench/stencil.sh, bench/batched.sh): how
# one coopsolve run ended, as a table row gives it.
#   run_status RC LOG H5 TIMEOUT  sets status (ok or skipped) and msg (one
#   line, no tabs or '|', at most 160 characters: why it was skipped)
run_status() {
  status=ok msg=
  if [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; then status=skipped msg="timed out after $4 s"
  elif [ "$1" -ne 0 ]; then
    status=skipped
    msg=$(grep -E '^coopsolve: ' "$2" | tail -n 1)
    [ -n "$msg" ] || msg=$(grep -iE 'error|fail' "$2" | tail -n 1)
    [ -n "$msg" ] || msg=$(grep -v '^[[:space:]-]*$' "$2" | tail -n 1)
    msg=${msg#coopsolve: }
    [ -n "$msg" ] || msg="exit status $1"
  elif [ ! -s "$3" ]; then status=skipped msg="exit status 0 but no $3"
  fi
  msg=$(printf '%s' "$msg" | tr '\t\r|' '  /' | cut -c1-160)
}
