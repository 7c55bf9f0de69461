#!/bin/sh
# The project's test suite as one command: the crate's tests (`cargo test`), then the stockcheck
# tests (`python3 -m unittest`, standard library only). Both always run; the exit status is 1 when
# any test failed or a suite could not run, 0 when every test passed.
#
#   sh check.sh                # both suites
#   sh check.sh rust           # only the crate's tests
#   sh check.sh python         # only the stockcheck tests
#
# Judging one slice of an aggregate git-mas run (GIT_MAS_CHANGED set: the files the slice's
# proposal changes), only the suites those files belong to run — Rust sources and the crate's
# manifest the crate's tests, Python sources the stockcheck tests, anything else none — since a
# slice is not the whole goal. The merged whole is checked with both.
#
# Runs from any directory (it works in the directory it sits in). cargo always builds into
# ./target beside this file, whatever CARGO_TARGET_DIR says: cargo judges a build fresh by file
# times, so a target directory shared between checkouts could pass one checkout on another's
# build (a checkout written before the other's build finished looks older than it). The crate
# has no dependencies, so a shared directory would save nothing anyway: a fresh checkout
# rebuilds the crate either way. Python writes no bytecode.
cd "$(dirname "$0")" || exit 1
CARGO_TARGET_DIR=$(pwd)/target
export CARGO_TARGET_DIR
suites=
if [ $# -eq 0 ] && [ -n "${GIT_MAS_CHANGED+set}" ]; then
  printf '%s\n' "$GIT_MAS_CHANGED" | grep -Eq '(\.rs|^Cargo\.(toml|lock))$' && suites=rust
  printf '%s\n' "$GIT_MAS_CHANGED" | grep -q '\.py$' && suites="$suites python"
  [ -n "$suites" ] || { echo "check.sh: the slice changes no tested file (${GIT_MAS_SLICE:-})"; exit 0; }
fi
[ -n "$suites" ] || suites=${*:-rust python}
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
