# Shared by the benchmark scripts (sourced, not run): tool checks and the hermetic scratch space.
#
#   need TOOL "how to install it"     exit with a message when TOOL is not on PATH
#   bench_scratch                     WORK: a fresh directory under ROOT (BENCH_DIR, default
#                                     target/bench), removed at exit unless KEEP is set; HOME, git
#                                     identity and config, and the key directory point into it
#
# Scratch space is under target/ by default: on this machine, file creation in /tmp measured ~13x
# slower than elsewhere on the same disk, which swamps both sides of a comparison.

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "$(basename "$0"): '$1' is required but not installed ($2)" >&2; exit 1; }
}

bench_scratch() {
  ROOT=${BENCH_DIR:-$SRC/target/bench}
  mkdir -p "$ROOT"
  ROOT=$(cd "$ROOT" && pwd)
  WORK=$(mktemp -d -p "$ROOT")
  # KEEP=1 keeps the scratch repositories (for profiling by hand).
  if [ -n "${KEEP:-}" ]; then echo "scratch: $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
  export HOME=$WORK/home GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_MAS_KEY_DIR=$WORK/keys NO_COLOR=1
  export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
  export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
  mkdir -p "$HOME"
}
