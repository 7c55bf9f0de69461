#!/usr/bin/env bash
# Installs the coding-agent CLIs the host tests drive (tests/cli/hosts/), at exact versions, from
# the npm registry into a cache folder: never globally. The tests find them in
# "${GIT_MAS_HOSTS_DIR:-${CARGO_TARGET_DIR:-target}/hosts}/node_modules/.bin".
#
# Run from the repository root: `bash tests/hosts/install.sh`. A second run with the same versions
# installed does nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The pinned versions. Bump them together with the presets they verify (src/peers/preset.rs).
PACKAGES=(
  "@anthropic-ai/claude-code@2.1.332"
  "@openai/codex@0.171.0"
  "opencode-ai@1.18.33"
  "@github/copilot@1.0.102"
)

dir="${GIT_MAS_HOSTS_DIR:-${CARGO_TARGET_DIR:-target}/hosts}"
mkdir -p "$dir"
stamp="$dir/.installed"
want="$(printf '%s\n' "${PACKAGES[@]}")"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dir/node_modules/.bin" ]; then
  echo "hosts already installed in $dir"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq nodejs npm) || sudo apt-get install -y -qq nodejs npm
fi

# A package.json of its own, so npm never walks up into the repository.
[ -f "$dir/package.json" ] || echo '{"name":"git-mas-test-hosts","private":true}' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error "${PACKAGES[@]}"
printf '%s\n' "$want" >"$stamp"
ls "$dir/node_modules/.bin"
