#!/usr/bin/env bash
# Installs the tools the tests need beyond npm (real servers the adapters are tested against).
# Idempotent and quick when everything is present: each tool is checked first and only
# installed when missing or at the wrong version.
#
#   LOCUS_TOOLS_DIR   where tools go (default: $HOME/.cache/locus-tools); binaries land in $LOCUS_TOOLS_DIR/bin
#
# One function per tool; test/support/tools.ts finds them (tools dir first, then PATH).
set -euo pipefail

TOOLS_SCRIPT="install-tools"
# shellcheck source=lib/tools-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/tools-common.sh"
mkdir -p "$BIN_DIR"

NATS_SERVER_VERSION="v2.15.2"
# promtool from the Prometheus Go module: module v0.316.0 is Prometheus 3.16.0.
PROMTOOL_MODULE_VERSION="v0.316.0"
PROMTOOL_VERSION="3.16.0"

# nats-server, built from its Go module (reuses the Go module and build caches).
install_nats_server() {
  local bin="$BIN_DIR/nats-server"
  if reported "$bin" --version | grep -q "$NATS_SERVER_VERSION\$"; then
    return 0
  fi
  # The right version on PATH will do too (tests look in $BIN_DIR, then on PATH).
  if [ ! -e "$bin" ] && command -v nats-server >/dev/null 2>&1 && nats-server --version 2>/dev/null | grep -q "$NATS_SERVER_VERSION\$"; then
    return 0
  fi
  need_go "nats-server $NATS_SERVER_VERSION"
  log "building nats-server $NATS_SERVER_VERSION into $BIN_DIR (go install)"
  GOBIN="$BIN_DIR" go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
  reported "$bin" --version | grep -q "$NATS_SERVER_VERSION\$" || fail "nats-server in $BIN_DIR does not report $NATS_SERVER_VERSION"
}

# Whether the promtool at $1 is the pinned one: it says so in --version (when built by this
# script, which stamps the version in), or its embedded Go build info names the module version
# (a plain `go install` leaves --version blank).
promtool_is_pinned() {
  local bin="$1"
  [ -x "$bin" ] || return 1
  if "$bin" --version 2>/dev/null | grep -q "^promtool, version $PROMTOOL_VERSION "; then
    return 0
  fi
  command -v go >/dev/null 2>&1 && go version -m "$bin" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+github.com/prometheus/prometheus[[:space:]]+$PROMTOOL_MODULE_VERSION([[:space:]]|\$)"
}

# promtool (checks and unit-tests the alert rules in deploy/prometheus), built from its Go module.
install_promtool() {
  local bin="$BIN_DIR/promtool"
  if promtool_is_pinned "$bin"; then
    return 0
  fi
  if [ ! -e "$bin" ] && command -v promtool >/dev/null 2>&1 && promtool_is_pinned "$(command -v promtool)"; then
    return 0
  fi
  need_go "promtool $PROMTOOL_VERSION"
  log "building promtool $PROMTOOL_VERSION ($PROMTOOL_MODULE_VERSION) into $BIN_DIR (go install)"
  GOBIN="$BIN_DIR" go install \
    -ldflags "-X github.com/prometheus/common/version.Version=$PROMTOOL_VERSION" \
    "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_MODULE_VERSION"
  promtool_is_pinned "$bin" || fail "promtool in $BIN_DIR does not report $PROMTOOL_VERSION"
}

# haproxy, from the Debian package (needs root).
install_haproxy() {
  if command -v haproxy >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" != "0" ]; then
    fail "haproxy is not installed and installing it needs root: run 'sudo apt-get install -y haproxy' (or run this script as root)"
  fi
  command -v apt-get >/dev/null 2>&1 || fail "haproxy is not installed and apt-get is not available: install haproxy with your package manager"
  log "installing haproxy (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
  command -v haproxy >/dev/null 2>&1 || fail "apt-get installed haproxy but it is not on PATH"
}

install_nats_server
install_promtool
install_haproxy

# etcd, kube-apiserver and helm for test/kube (issue #23): built from Go modules by their own script.
bash "$(dirname "$0")/install-k8s-tools.sh"
