#!/bin/sh
# The project's test suite as one command: the crate's tests (`cargo test`), then the stockcheck
# tests (`python3 -m unittest`, standard library only). Both always run; the exit status is 1 when
# any test failed or a suite could not run, 0 when every test passed.
#
#   sh check.sh                # both suites
#   sh check.sh rust           # only the crate's tests
#   sh check.sh python         # only the stockcheck tests
#
# Runs from any directory (it works in the directory it sits in) and writes nothing there:
# cargo builds into $CARGO_TARGET_DIR when it is set (a directory kept between runs keeps the
# build warm), else into ./target; Python writes no bytecode.
cd "$(dirname "$0")" || exit 1
suites=${*:-rust python}
failed=
for suite in $suites; do
  case $suite in
    rust) cargo test --offline --locked --quiet --no-fail-fast || failed="$failed rust" ;;
    python) (cd tools && PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover --quiet -s tests) || failed="$failed python" ;;
    *) echo "check.sh: unknown suite $suite (rust, python)" >&2; exit 2 ;;
  esac
done
if [ -n "$failed" ]; then
  echo "check.sh: FAILED:$failed"
  exit 1
fi
echo "check.sh: all tests passed ($suites)"
