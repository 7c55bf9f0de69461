#!/usr/bin/env bash
# What the tests need beyond Rust and git, installed where missing: man (for `git mas --help`),
# python3 (the fixture project's own test suite, the team's check in the demo and the aggregate
# tests, runs its stockcheck unittests; pytest, pinned, for a check that writes JUnit XML), strace (the crash tests kill git-mas at chosen syscalls with its fault injection),
# chromium (the `git mas report --html` tests open the page in it, headless), lighttpd and openssl
# (the smart-HTTP sync tests serve git http-backend through it, with a password file) and the real
# coding-agent CLIs the host tests drive, at pinned versions, into target/hosts (never globally),
# with the MCP Inspector and its own Node (tests/hosts/install.sh), and the three real projects the
# real-project tests and bench/aggregate-real.sh run git-mas on (toolz, heck, @fastify/busboy), at
# pinned versions with their sha256 verified, into target/projects (tests/projects/fetch.sh).
# Run from anywhere; a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { # need <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  (apt-get update -qq && apt-get install -y -qq "$2") || sudo apt-get install -y -qq "$2"
}
need man man-db
need strace strace
need python3 python3
need chromium chromium
need openssl openssl
[ -x /usr/sbin/lighttpd ] || need lighttpd lighttpd
# pytest writes the JUnit XML report the differential endorsement tests read.
python3 -m pytest --version >/dev/null 2>&1 || python3 -m pip install -q 'pytest==9.2.0'
bash tests/hosts/install.sh
bash tests/projects/fetch.sh
