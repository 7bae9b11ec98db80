# What scripts/install-tools.sh and scripts/install-k8s-tools.sh share: the tools cache and the
# helpers every installer uses. Sourced by them after setting TOOLS_SCRIPT (the name their
# messages start with); it runs nothing itself.
#
#   LOCUS_TOOLS_DIR   where tools go (default: $HOME/.cache/locus-tools); binaries land in $LOCUS_TOOLS_DIR/bin

TOOLS_DIR="${LOCUS_TOOLS_DIR:-${HOME:-/tmp}/.cache/locus-tools}"
BIN_DIR="$TOOLS_DIR/bin"

# Progress and errors go to stderr, prefixed with the script's name.
log() { echo "$TOOLS_SCRIPT: $*" >&2; }
fail() { echo "$TOOLS_SCRIPT: error: $*" >&2; exit 1; }

# Fails unless Go is there to build tool $1 (its name and version) with.
need_go() {
  command -v go >/dev/null 2>&1 || fail "$1 is missing and Go is not installed (needed to build it: https://go.dev/dl/)"
}

# The version a binary reports, through the given flags; empty when it does not run.
reported() {
  local bin="$1"; shift
  [ -x "$bin" ] || return 0
  "$bin" "$@" 2>/dev/null || true
}
