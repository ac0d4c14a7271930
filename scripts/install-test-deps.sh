#!/usr/bin/env bash
# Tools the test suite runs inside and around the sandbox: a C compiler for attack probes,
# curl for the egress tests, openssh for git over ssh, bash, util-linux's
# setsid/setpriv/unshare, and strace for the shell analysis's soundness harness. A fresh Debian machine of this project's kind has
# most of them; this installs whatever is missing (needs root and apt). What it changes on
# the system is printed first: Debian packages (only those named, without recommended ones,
# so nothing such as libnss-mdns rewrites /etc/nsswitch.conf); everything else goes into
# .test-deps/ beside this checkout.
set -euo pipefail
missing=()
command -v cc >/dev/null || missing+=(gcc libc6-dev)
# libFuzzer for the fuzz smoke (scripts/fuzz.sh) is C++, built by libfuzzer-sys.
command -v c++ >/dev/null || missing+=(g++)
command -v curl >/dev/null || missing+=(curl)
command -v bash >/dev/null || missing+=(bash)
command -v setsid >/dev/null || missing+=(util-linux)
command -v setpriv >/dev/null || missing+=(util-linux)
command -v unshare >/dev/null || missing+=(util-linux)
command -v strace >/dev/null || missing+=(strace)
command -v openssl >/dev/null || missing+=(openssl)
# git over ssh (crates/cordon/tests/egress_ssh.rs): a real sshd started by the test, and
# the client with ssh-agent and ssh-keygen.
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null || missing+=(openssh-client)
command -v ssh-agent >/dev/null || missing+=(openssh-client)
command -v git >/dev/null || missing+=(git)
# The shared store's tests (crates/cordon-store, issue 38): Debian's PostgreSQL server,
# started by scripts/pg-test-cluster.sh in a temporary directory on a Unix socket.
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing Debian packages (system-wide): ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The MCP gateway's end-to-end tests (crates/cordon/tests/mcp_gateway.rs, mcp_hostile.rs):
# node and npm for a real MCP server from npm, the TypeScript MCP SDK (the client Claude
# Code uses) and Python's `mcp` SDK as real clients, pinned, installed beside this
# script's checkout in .test-deps/mcp (the tests look for them there).
MCP_SERVER_EVERYTHING=2026.8.31
MCP_TS_SDK=1.32.2
PYTHON_MCP=2.3.0
deps="$(cd "$(dirname "$0")/.." && pwd)/.test-deps/mcp"
missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v python3 >/dev/null || missing+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing Debian packages (system-wide) for the MCP tests: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
mkdir -p "$deps"
pkg="$deps/node_modules/@modelcontextprotocol/server-everything/package.json"
if ! grep -q "\"version\": \"$MCP_SERVER_EVERYTHING\"" "$pkg" 2>/dev/null; then
  echo "installing @modelcontextprotocol/server-everything@$MCP_SERVER_EVERYTHING into $deps"
  npm install --prefix "$deps" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-everything@$MCP_SERVER_EVERYTHING"
fi
sdk="$deps/node_modules/@modelcontextprotocol/sdk/package.json"
if ! grep -q "\"version\": \"$MCP_TS_SDK\"" "$sdk" 2>/dev/null; then
  echo "installing @modelcontextprotocol/sdk@$MCP_TS_SDK into $deps"
  npm install --prefix "$deps" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-everything@$MCP_SERVER_EVERYTHING" \
    "@modelcontextprotocol/sdk@$MCP_TS_SDK"
fi
if ! "$deps/venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$PYTHON_MCP')" 2>/dev/null; then
  echo "installing Python mcp==$PYTHON_MCP into $deps/venv"
  python3 -m venv "$deps/venv"
  "$deps/venv/bin/pip" install -q "mcp==$PYTHON_MCP"
fi

# The audit log's OpenTelemetry export test (crates/cordon-export/tests/otlp.rs): a local
# OTLP/HTTP receiver that decodes what cordon sends with the official protobuf definitions,
# Python's `opentelemetry-proto` (pinned), in .test-deps/otlp/venv.
OTEL_PROTO=1.45.0
otlp="$(cd "$(dirname "$0")/.." && pwd)/.test-deps/otlp"
if ! "$otlp/venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('opentelemetry-proto') != '$OTEL_PROTO')" 2>/dev/null; then
  echo "installing Python opentelemetry-proto==$OTEL_PROTO into $otlp/venv"
  mkdir -p "$otlp"
  python3 -m venv "$otlp/venv"
  "$otlp/venv/bin/pip" install -q "opentelemetry-proto==$OTEL_PROTO"
fi

# The real harness test (crates/cordon/tests/harness_real.rs): the Claude Code, Gemini
# and Codex CLIs from npm, pinned, in .test-deps/harness, each driven against a local mock
# model server. Claude Code's and Codex's packages carry their native binaries as
# per-platform optional dependencies. All are installed in one command so that none drops
# the others.
CLAUDE_CODE=2.1.197
GEMINI_CLI=0.61.0
CODEX=0.171.0
harness="$(cd "$(dirname "$0")/.." && pwd)/.test-deps/harness"
mkdir -p "$harness"
installed() { grep -q "\"version\": \"$2\"" "$harness/node_modules/$1/package.json" 2>/dev/null; }
if ! installed @anthropic-ai/claude-code "$CLAUDE_CODE" || ! installed @google/gemini-cli "$GEMINI_CLI" \
  || ! installed @openai/codex "$CODEX"; then
  echo "installing @anthropic-ai/claude-code@$CLAUDE_CODE, @google/gemini-cli@$GEMINI_CLI and @openai/codex@$CODEX into $harness"
  npm install --prefix "$harness" --no-audit --no-fund --prefer-offline --save-exact --silent \
    "@anthropic-ai/claude-code@$CLAUDE_CODE" "@google/gemini-cli@$GEMINI_CLI" "@openai/codex@$CODEX"
fi

# The web console's browser test (crates/cordon/tests/ui_browser.rs) and bench/ui.sh:
# Debian's chromium, driven headless by Playwright for Python, pinned, in .test-deps/ui.
# Playwright's own browser download is not used (the test launches /usr/bin/chromium).
PLAYWRIGHT=1.65.2
ui="$(cd "$(dirname "$0")/.." && pwd)/.test-deps/ui"
if [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian packages (system-wide) for the console's browser test: chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
fi
if ! "$ui/venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('playwright') != '$PLAYWRIGHT')" 2>/dev/null; then
  echo "installing Python playwright==$PLAYWRIGHT into $ui/venv"
  mkdir -p "$ui"
  python3 -m venv "$ui/venv"
  "$ui/venv/bin/pip" install -q "playwright==$PLAYWRIGHT"
fi

# The package test (scripts/test-package.sh) checks the AppArmor profile with AppArmor's
# own parser. The profile's `userns` rule needs AppArmor 4 (Ubuntu 24.04's); this Debian
# release ships 3.0, so the parser and the C library it is built against are taken from
# Debian's next release (trixie) through apt, unpacked into .test-deps/apparmor (nothing
# is installed on the system), and run with that release's loader.
APPARMOR_MAJOR=4
aa="$(cd "$(dirname "$0")/.." && pwd)/.test-deps/apparmor"
if ! "$aa/apparmor_parser" --version 2>/dev/null | grep -q "version ${APPARMOR_MAJOR}\."; then
  echo "fetching apparmor ${APPARMOR_MAJOR}.x and libc6 from Debian trixie into $aa (nothing installed)"
  rm -rf "$aa"
  mkdir -p "$aa/apt/lists/partial" "$aa/apt/cache/archives/partial" "$aa/debs"
  echo "deb http://deb.debian.org/debian trixie main" >"$aa/apt/sources.list"
  apt_opts=(-o Dir::Etc::sourcelist="$aa/apt/sources.list" -o Dir::Etc::sourceparts=/dev/null
    -o Dir::State::Lists="$aa/apt/lists" -o Dir::Cache="$aa/apt/cache" -o APT::Sandbox::User=root -qq)
  apt-get "${apt_opts[@]}" update
  (cd "$aa/debs" && apt-get "${apt_opts[@]}" download apparmor libc6)
  for deb in "$aa"/debs/*.deb; do dpkg-deb -x "$deb" "$aa/root"; done
  rm -rf "$aa/apt" "$aa/debs"
  cat >"$aa/apparmor_parser" <<WRAP
#!/bin/sh
# AppArmor's parser (trixie's) with its own C library, reading its own abi/ and tunables/.
lib="$aa/root/usr/lib/x86_64-linux-gnu"
exec "\$lib/ld-linux-x86-64.so.2" --library-path "\$lib" "$aa/root/usr/sbin/apparmor_parser" \\
    --base "$aa/root/etc/apparmor.d" -I "$aa/root/etc/apparmor.d" "\$@"
WRAP
  chmod +x "$aa/apparmor_parser"
fi
