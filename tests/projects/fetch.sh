#!/usr/bin/env bash
# Fetches the three real projects the real-project tests (tests/cli/real_projects.rs) and
# bench/aggregate-real.sh run git-mas on, at pinned versions, from the package registries through
# their ordinary clients (pip, cargo, npm), each archive's sha256 verified, then unpacked: never
# installed anywhere, no dependency of theirs fetched (they have none).
#
#   toolz 1.0.0           PyPI sdist: a pure-Python library shipping its pytest suite (180 tests)
#   heck 0.5.0            crates.io: a dependency-free Rust crate, unit tests in each module
#   @fastify/busboy 3.2.6 npm: a dependency-free Node library shipping its `node --test` suite
#
# Into "${GIT_MAS_PROJECTS_DIR:-${CARGO_TARGET_DIR:-target}/projects}/<name>" (the archive beside
# the unpacked tree). Run from anywhere; a second run with the same pins fetches nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

# name|version|sha256 of the registry's archive. Bump a version with its digest and the bug table
# of tests/cli/real_projects.rs (each bug's text must still occur once).
PINS=(
  "toolz|1.0.0|2c86e3d9a04798ac556793bced838816296a2f085017664e4995cb40a1047a02"
  "heck|0.5.0|2304e00983f87ffb38b55b444b5e3b60a884b5d30c0fca7d82fe33449bbe55ea"
  "@fastify/busboy|3.2.6|b24b93d82fbc4fa48fa2d217b226b53eb1e46f445cc7e636e0b8858c9dd0c1ce"
)

dir="${GIT_MAS_PROJECTS_DIR:-${CARGO_TARGET_DIR:-target}/projects}"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# The folder name of a project (npm's scope dropped).
folder() { local n=${1#@}; echo "${n//\//-}"; }

# fetch <name> <version> <into>: the registry's archive of <name>@<version> into <into>, its path
# printed.
fetch() {
  local name=$1 version=$2 into=$3
  case "$name" in
    toolz)
      python3 -m pip download --quiet --no-deps --no-binary :all: \
        --dest "$into" "$name==$version" >&2
      echo "$into/$name-$version.tar.gz" ;;
    heck)
      # cargo fetches a crate for a manifest that depends on it, exactly this version, and keeps
      # the archive in its registry cache.
      local scratch="$into/fetch-$name"
      mkdir -p "$scratch/src"
      printf '[package]\nname = "fetch-%s"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n[workspace]\n' \
        "$name" "$name" "$version" >"$scratch/Cargo.toml"
      : >"$scratch/src/lib.rs"
      cargo fetch --quiet --manifest-path "$scratch/Cargo.toml" >&2
      local cached
      cached=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$name-$version.crate" | head -n 1)
      cp "$cached" "$into/$name-$version.crate"
      rm -rf "$scratch"
      echo "$into/$name-$version.crate" ;;
    @fastify/busboy)
      (cd "$into" && npm pack --silent "$name@$version" >/dev/null)
      echo "$into/fastify-busboy-$version.tgz" ;;
  esac
}

for pin in "${PINS[@]}"; do
  IFS='|' read -r name version sum <<<"$pin"
  into="$dir/$(folder "$name")"
  stamp="$into/.fetched"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pin" ] && [ -d "$into/src" ]; then
    echo "$name $version already in $into"
    continue
  fi
  rm -rf "$into"
  mkdir -p "$into"
  archive=$(fetch "$name" "$version" "$into")
  got=$(sha256sum "$archive" | cut -d' ' -f1)
  if [ "$got" != "$sum" ]; then
    echo "fetch.sh: $name $version: sha256 $got, expected $sum" >&2
    exit 1
  fi
  # The unpacked tree, as the registry ships it (its one top folder stripped).
  mkdir -p "$into/src"
  tar -xzf "$archive" -C "$into/src" --strip-components=1
  printf '%s\n' "$pin" >"$stamp"
  echo "$name $version fetched into $into/src"
done
