#!/usr/bin/env bash
# Regenerates the fixture project's generated inputs, which are committed so that tests need no
# network and no indexer:
#
#   tests/fixtures-repo/index.scip              SCIP index of the Python package tools/stockcheck
#                                               (@sourcegraph/scip-python); its tests (tools/tests)
#                                               are not part of the package and not indexed
#   tests/fixtures-repo/diagnostics/cargo.json  `cargo check --message-format=json` of the Rust crate
#   tests/fixtures-repo/diagnostics/ruff.sarif  `ruff check --output-format sarif` of the Python package
#
#   tests/regenerate-fixture-inputs.sh
#
# Needs: node and npm, python3 (with venv), cargo, and the npm and PyPI registries. The tools are
# installed at pinned versions into a scratch directory (or into $GIT_MAS_FIXTURE_TOOLS, kept between
# runs), never into the repository. Everything runs on a scratch copy of the fixture, so no target/,
# node_modules/, __pycache__/ or tool cache can land in tests/fixtures-repo/.
#
# Machine independence: the scratch copy's absolute path is replaced with the placeholder
# /fixtures-repo (cargo's manifest and artifact paths, the SCIP metadata's project root), and ruff's
# absolute file:// URIs become URIs relative to the uriBaseId %SRCROOT% (the fixture root), which
# stays valid SARIF 2.1.0. Span file names in cargo's output are already relative.
set -euo pipefail

SCIP_PYTHON_VERSION=0.6.6
RUFF_VERSION=0.17.6
PLACEHOLDER=/fixtures-repo

here=$(cd "$(dirname "$0")" && pwd)
fixture=$here/fixtures-repo
work=$(mktemp -d "${TMPDIR:-/tmp}/git-mas-fixture-inputs.XXXXXX")
trap 'rm -rf "$work"' EXIT
tools=${GIT_MAS_FIXTURE_TOOLS:-$work/tools}
mkdir -p "$tools"

# --- tools, at pinned versions ------------------------------------------------------------------
scip_python=$tools/npm/node_modules/.bin/scip-python
if [ ! -x "$scip_python" ] ||
  [ "$(node -p "require('$tools/npm/node_modules/@sourcegraph/scip-python/package.json').version")" != "$SCIP_PYTHON_VERSION" ]; then
  mkdir -p "$tools/npm"
  [ -f "$tools/npm/package.json" ] || echo '{"private": true}' >"$tools/npm/package.json"
  npm install --prefix "$tools/npm" --no-audit --no-fund --silent "@sourcegraph/scip-python@$SCIP_PYTHON_VERSION"
fi
ruff=$tools/venv/bin/ruff
if [ ! -x "$ruff" ] || [ "$("$ruff" --version)" != "ruff $RUFF_VERSION" ]; then
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "ruff==$RUFF_VERSION"
fi

# --- a clean scratch copy of the fixture (sources only) -----------------------------------------
copy=$work/fixture
mkdir -p "$copy"
tar -C "$fixture" \
  --exclude=./target --exclude=./index.scip --exclude=./diagnostics \
  --exclude=node_modules --exclude=__pycache__ --exclude=.ruff_cache \
  -cf - . | tar -C "$copy" -xf -
mkdir -p "$fixture/diagnostics"
# The package alone, for the index: the same sources less the package's tests.
package=$work/package
mkdir -p "$package"
tar -C "$copy" --exclude=./tools/tests -cf - . | tar -C "$package" -xf -

# --- SCIP index -----------------------------------------------------------------------------------
# An empty environment keeps packages installed on this machine out of the index; run from the
# fixture root so that document paths are relative to it (tools/stockcheck/models.py, ...).
echo '[]' >"$work/environment.json"
(cd "$package" && "$scip_python" index --quiet --project-name stockcheck --project-version 0.1.0 \
  --environment "$work/environment.json" --cwd "$package" --output "$work/index.scip")

# Replace Metadata.project_root (field 3 of Index.metadata, field 1) with the placeholder; the other
# bytes are copied unchanged.
python3 - "$work/index.scip" "$fixture/index.scip" "file://$PLACEHOLDER" <<'EOF'
import sys

def varint(buf, i):
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i

def encode_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)

def fields(buf):
    i = 0
    while i < len(buf):
        start = i
        key, i = varint(buf, i)
        wire = key & 7
        if wire == 0:
            _, i = varint(buf, i)
        elif wire == 1:
            i += 8
        elif wire == 2:
            n, i = varint(buf, i)
            i += n
        elif wire == 5:
            i += 4
        else:
            raise SystemExit(f"unexpected wire type {wire}")
        yield key >> 3, wire, buf[start:i]

def payload(field):
    _, i = varint(field, 0)
    n, i = varint(field, i)
    return field[i : i + n]

def length_delimited(number, data):
    return encode_varint(number << 3 | 2) + encode_varint(len(data)) + data

src, dst, root = sys.argv[1], sys.argv[2], sys.argv[3].encode()
index = open(src, "rb").read()
out = bytearray()
replaced = False
for number, wire, field in fields(index):
    if number == 1 and wire == 2:
        meta = bytearray()
        for n2, w2, f2 in fields(payload(field)):
            if n2 == 3 and w2 == 2:
                f2 = length_delimited(3, root)
                replaced = True
            meta += f2
        field = length_delimited(1, bytes(meta))
    out += field
if not replaced:
    raise SystemExit("no project_root in the index metadata")
open(dst, "wb").write(bytes(out))
EOF

# --- cargo diagnostics ----------------------------------------------------------------------------
(cd "$copy" && CARGO_TARGET_DIR=$work/target cargo check --quiet --locked --offline --message-format=json) \
  >"$work/cargo.json"
python3 - "$work/cargo.json" "$fixture/diagnostics/cargo.json" "$copy" "$work/target" "$PLACEHOLDER" <<'EOF'
import json, sys

src, dst, copy, target, placeholder = sys.argv[1:]
lines = []
for line in open(src, encoding="utf-8"):
    line = line.replace(target, placeholder + "/target").replace(copy, placeholder)
    json.loads(line)  # still one JSON value per line
    lines.append(line if line.endswith("\n") else line + "\n")
warnings = [
    m for m in map(json.loads, lines)
    if m.get("reason") == "compiler-message" and m["message"]["level"] == "warning" and m["message"]["spans"]
]
if [s["file_name"] for m in warnings for s in m["message"]["spans"] if s["is_primary"]] != ["src/report.rs"]:
    raise SystemExit("expected exactly one warning, in src/report.rs")
open(dst, "w", encoding="utf-8").writelines(lines)
EOF

# --- ruff diagnostics (SARIF 2.1.0) ---------------------------------------------------------------
# ruff exits 1 when it finds something, which the fixture guarantees.
(cd "$copy" && "$ruff" check --no-cache --output-format sarif .) >"$work/ruff.sarif" || [ $? -eq 1 ]
python3 - "$work/ruff.sarif" "$fixture/diagnostics/ruff.sarif" "$copy" <<'EOF'
import json, sys
from urllib.parse import quote

src, dst, copy = sys.argv[1:]
prefix = "file://" + quote(copy) + "/"
sarif = json.load(open(src, encoding="utf-8"))
assert sarif["version"] == "2.1.0", sarif["version"]

def relativize(node):
    if isinstance(node, dict):
        uri = node.get("uri")
        if isinstance(uri, str) and uri.startswith(prefix):
            node["uri"] = uri[len(prefix):]
            node["uriBaseId"] = "%SRCROOT%"
        for value in node.values():
            relativize(value)
    elif isinstance(node, list):
        for value in node:
            relativize(value)

relativize(sarif)
text = json.dumps(sarif)
if copy in text:
    raise SystemExit("an absolute path of the scratch copy survived")
for run in sarif["runs"]:
    # No "uri": the base is wherever the fixture project is checked out (SARIF 2.1.0 §3.14.14).
    run["originalUriBaseIds"] = {
        "%SRCROOT%": {"description": {"text": "The root of the fixture project (tests/fixtures-repo)."}}
    }
with open(dst, "w", encoding="utf-8") as out:
    json.dump(sarif, out, indent=2, sort_keys=True)
    out.write("\n")
EOF

echo "regenerated: $fixture/index.scip, $fixture/diagnostics/cargo.json, $fixture/diagnostics/ruff.sarif"
