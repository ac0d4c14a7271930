#!/usr/bin/env bash
# Tools the test suite runs inside and around the sandbox: a C compiler for attack probes,
# curl for the egress tests, bash, util-linux's setsid/setpriv/unshare, and strace for the
# shell analysis's soundness harness. A fresh Debian machine of this project's kind has
# most of them; this installs whatever is missing (needs root and apt).
set -euo pipefail
missing=()
command -v cc >/dev/null || missing+=(gcc libc6-dev)
command -v curl >/dev/null || missing+=(curl)
command -v bash >/dev/null || missing+=(bash)
command -v setsid >/dev/null || missing+=(util-linux)
command -v setpriv >/dev/null || missing+=(util-linux)
command -v unshare >/dev/null || missing+=(util-linux)
command -v strace >/dev/null || missing+=(strace)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing test tools: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
