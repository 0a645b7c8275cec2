# tests/cli/lib.sh: what the command-line tests share (sourced).
# fails counts the checks that failed.
fails=0

# expect NAME STATUS PATTERN COMMAND...: COMMAND exits STATUS and its
# stdout and stderr together match the extended regex PATTERN
expect() {
  local name=$1 status=$2 pattern=$3
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$status" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL $name: exit $rc (expected $status), output:"
    echo "$out" | head -20
    fails=$((fails + 1))
  fi
}
