#!/usr/bin/env bash
# Installs the peers of `npm run bench -- peers` (test/bench/peers.bench.ts): Redis and
# PostgreSQL 15 with PostGIS from the Debian packages, and Tile38 built from its source when that
# source is present. Only the bench needs them: .ci/run and `npm test` never run this script.
# Idempotent and quick when everything is present. Installing packages needs root (apt-get).
#
#   LOCUS_TOOLS_DIR     where tools go (default: $HOME/.cache/locus-tools); binaries land in $LOCUS_TOOLS_DIR/bin
#   LOCUS_TILE38_SRC    Tile38's source tree (default: $LOCUS_TOOLS_DIR/src/tile38)
#
# Tile38 is in no package registry. Put its source (github.com/tidwall/tile38, any recent
# release) at $LOCUS_TILE38_SRC; this script then builds $LOCUS_TOOLS_DIR/bin/tile38-server with
# Go. The bench runs it only when TILE38_BIN names that binary, as the script says at the end.
#
# The bench starts every peer itself, as a child process on a loopback port with a temporary
# directory: the packages' own services are not used (in a container without systemd they do
# not start; elsewhere they may run, on their usual ports, untouched by the bench).
set -euo pipefail

TOOLS_SCRIPT="install-bench-peers"
# shellcheck source=lib/tools-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/tools-common.sh"
mkdir -p "$BIN_DIR"

PG_BIN="/usr/lib/postgresql/15/bin"
TILE38_SRC="${LOCUS_TILE38_SRC:-$TOOLS_DIR/src/tile38}"

apt_updated=""
# Installs Debian packages $@ (apt-get update once first).
apt_install() {
  command -v apt-get >/dev/null 2>&1 || fail "$* missing and there is no apt-get: install them with your system's packages"
  [ "$(id -u)" = 0 ] || fail "$* missing: installing them needs root (apt-get install -y $*)"
  if [ -z "$apt_updated" ]; then
    log "apt-get update"
    apt-get update -qq
    apt_updated=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

install_redis() {
  if command -v redis-server >/dev/null 2>&1; then
    return 0
  fi
  apt_install redis-server
}

install_postgis() {
  if [ -x "$PG_BIN/postgres" ] && [ -f /usr/share/postgresql/15/extension/postgis.control ]; then
    return 0
  fi
  # Without a main cluster: the bench makes its own throwaway cluster, and a default one would
  # take port 5432.
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
  fi
  apt_install postgresql-15 postgresql-15-postgis-3
}

install_tile38() {
  local bin="$BIN_DIR/tile38-server"
  if [ -x "$bin" ]; then
    return 0
  fi
  if [ ! -f "$TILE38_SRC/cmd/tile38-server/main.go" ]; then
    log "Tile38 not built: no source at $TILE38_SRC (put github.com/tidwall/tile38 there, or set LOCUS_TILE38_SRC); the bench then runs without it"
    return 0
  fi
  need_go "tile38-server"
  log "building tile38-server from $TILE38_SRC into $BIN_DIR (go build)"
  (cd "$TILE38_SRC" && go build -o "$bin" ./cmd/tile38-server)
}

install_redis
install_postgis
install_tile38
if [ -x "$BIN_DIR/tile38-server" ]; then
  log "ready; run with Tile38: TILE38_BIN=$BIN_DIR/tile38-server npm run bench -- peers"
else
  log "ready (without Tile38): npm run bench -- peers"
fi
