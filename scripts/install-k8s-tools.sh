#!/usr/bin/env bash
# Builds the Kubernetes tools the tests run against (issue #23): etcd, kube-apiserver and helm,
# pinned, from their Go modules through the Go module proxy, into the same tools cache as
# scripts/install-tools.sh ($LOCUS_TOOLS_DIR/bin, default ~/.cache/locus-tools/bin).
#
# Idempotent: a tool whose binary reports the pinned version is left alone (helm: and was built
# with a release build's flags), so a second run only runs a few `--version` commands. Builds reuse Go's module cache (GOMODCACHE) and build cache
# (GOCACHE); the first build of kube-apiserver takes minutes (see docs/operations.md).
#
# None of the three can be built with a plain `go install module@version`: etcd's server module
# and k8s.io/kubernetes carry `replace` directives (kubernetes maps its k8s.io/* staging modules to
# ./staging/src, which the published module does not contain). So each is built from a small
# wrapper module under $LOCUS_TOOLS_DIR/src that requires the pinned module and, for kubernetes,
# replaces every staging module with its published release of the same minor and patch
# (k8s.io/X v1.34.4 -> k8s.io/X v0.34.4), the list read from kubernetes' own go.mod.
#
#   LOCUS_TOOLS_DIR      where tools go (default: $HOME/.cache/locus-tools)
#   LOCUS_GO_BUILD_NICE  niceness for the go builds (default 10; the machines are shared)
set -euo pipefail

TOOLS_SCRIPT="install-k8s-tools"
# shellcheck source=lib/tools-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/tools-common.sh"
SRC_DIR="$TOOLS_DIR/src"
mkdir -p "$BIN_DIR" "$SRC_DIR"

ETCD_VERSION="v3.6.16"
KUBERNETES_VERSION="v1.34.4"
HELM_VERSION="v3.22.0"
# The Prometheus Operator's CRDs (ServiceMonitor, PrometheusRule), so that the chart's monitoring
# manifests are validated by the API server too: generated with controller-gen from the types
# of the operator's published API module, as the project itself generates them.
CONTROLLER_TOOLS_VERSION="v0.23.0"
MONITORING_API_VERSION="v0.95.2"

NICE="${LOCUS_GO_BUILD_NICE:-10}"

# A fresh wrapper module directory for tool $1 at version $2 (go.mod written by the caller).
wrapper_dir() {
  local dir="$SRC_DIR/$1-$2"
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "$dir"
}

# Runs `go get` then `go build` in a wrapper module; prints the build time.
#   build_in <dir> <output> <package> <ldflags> <module@version to get>
build_in() {
  local dir="$1" out="$2" pkg="$3" ldflags="$4" get="$5" start end
  start=$(date +%s)
  (
    cd "$dir"
    export GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
    nice -n "$NICE" go get "$get"
    nice -n "$NICE" go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg"
  )
  mv -f "$out.tmp" "$out"
  end=$(date +%s)
  log "built $(basename "$out") in $((end - start)) s"
}

# Builds tool $1 at version $2 into $BIN_DIR/$1 from a wrapper module that requires module $3 at
# that version: package $4 (got at that version), with ldflags $5.
build_from_module() {
  local name="$1" version="$2" module="$3" pkg="$4" ldflags="$5" dir
  need_go "$name $version"
  log "building $name $version into $BIN_DIR"
  dir=$(wrapper_dir "$name" "$version")
  printf 'module locus.local/tools/%s\n\ngo 1.24.0\n\nrequire %s %s\n' "$name" "$module" "$version" >"$dir/go.mod"
  build_in "$dir" "$BIN_DIR/$name" "$pkg" "$ldflags" "$pkg@$version"
}

# etcd, the server binary of go.etcd.io/etcd/server/v3 (its package main is the module root).
install_etcd() {
  local bin="$BIN_DIR/etcd" want="${ETCD_VERSION#v}"
  if reported "$bin" --version | grep -q "^etcd Version: $want\$"; then return 0; fi
  build_from_module etcd "$ETCD_VERSION" go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3 ""
  reported "$bin" --version | grep -q "^etcd Version: $want\$" || fail "etcd in $BIN_DIR does not report $ETCD_VERSION"
}

# kube-apiserver from k8s.io/kubernetes, with the version stamped the way kubernetes' own build does.
install_kube_apiserver() {
  local bin="$BIN_DIR/kube-apiserver"
  if reported "$bin" --version | grep -q "^Kubernetes $KUBERNETES_VERSION\$"; then return 0; fi
  need_go "kube-apiserver $KUBERNETES_VERSION"
  log "building kube-apiserver $KUBERNETES_VERSION into $BIN_DIR (the first build takes several minutes)"
  # kubernetes' go.mod, for its list of staging modules.
  local gomod
  gomod=$(cd "$SRC_DIR" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [ -n "$gomod" ] && [ -f "$gomod" ] || fail "could not download k8s.io/kubernetes@$KUBERNETES_VERSION through the Go module proxy"
  local staging="v0.${KUBERNETES_VERSION#v1.}"
  local replaces
  replaces=$(sed -n 's|^[[:space:]]*\(k8s\.io/[a-z0-9.-]*\) => \./staging/src/k8s\.io/[a-z0-9.-]*[[:space:]]*$|\t\1 => \1 '"$staging"'|p' "$gomod")
  [ -n "$replaces" ] || fail "found no staging replace lines in kubernetes' go.mod ($gomod)"
  local dir
  dir=$(wrapper_dir kube-apiserver "$KUBERNETES_VERSION")
  {
    printf 'module locus.local/tools/kube-apiserver\n\ngo 1.24.0\n\ngodebug default=go1.24\n\n'
    printf 'require k8s.io/kubernetes %s\n\nreplace (\n%s\n)\n' "$KUBERNETES_VERSION" "$replaces"
  } >"$dir/go.mod"
  local minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
  local v="k8s.io/component-base/version"
  local ldflags="-X $v.gitVersion=$KUBERNETES_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor"
  ldflags+=" -X $v.gitTreeState=clean -X $v.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  build_in "$dir" "$bin" k8s.io/kubernetes/cmd/kube-apiserver "$ldflags" "k8s.io/kubernetes/cmd/kube-apiserver@$KUBERNETES_VERSION"
  reported "$bin" --version | grep -q "^Kubernetes $KUBERNETES_VERSION\$" || fail "kube-apiserver in $BIN_DIR does not report $KUBERNETES_VERSION"
}

# The Kubernetes version helm assumes without --kube-version (.Capabilities.KubeVersion.Version),
# rendered from a throw-away chart; empty when the binary does not run. A helm built without the
# release build's flags assumes v1.20.0, and refuses charts that ask for a newer Kubernetes.
helm_default_kube_version() {
  local bin="$1" chart
  [ -x "$bin" ] || return 0
  chart=$(mktemp -d)
  mkdir "$chart/templates"
  printf 'apiVersion: v2\nname: probe\nversion: 0.1.0\n' >"$chart/Chart.yaml"
  printf '# {{ .Capabilities.KubeVersion.Version }}\n' >"$chart/templates/probe.yaml"
  "$bin" template probe "$chart" 2>/dev/null | sed -n 's/^# \(v[0-9][0-9.]*\)$/\1/p' || true
  rm -rf "$chart"
}

# Whether the helm at $1 is the pinned version built as a release: its version stamped, and its
# default Kubernetes version not the unstamped v1.20.0.
helm_is_release_build() {
  local bin="$1" kube
  reported "$bin" version --short | grep -q "^$HELM_VERSION\b" || return 1
  kube=$(helm_default_kube_version "$bin")
  [ -n "$kube" ] && [ "$kube" != "v1.20.0" ]
}

# helm from helm.sh/helm/v3/cmd/helm, with the flags helm's Makefile sets for a release: the
# version (no `unreleased` metadata, a clean tree) and the Kubernetes version it assumes by
# default, major and minor of its k8s.io/client-go plus one major (v0.37 -> 1.37), for templates
# (chartutil) and for lint's deprecation checks. The git commit is not in the module: left empty.
install_helm() {
  local bin="$BIN_DIR/helm"
  if helm_is_release_build "$bin"; then return 0; fi
  need_go "helm $HELM_VERSION"
  local gomod client_go major minor
  gomod=$(cd "$SRC_DIR" && GOFLAGS=-mod=mod go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [ -n "$gomod" ] && [ -f "$gomod" ] || fail "could not download helm.sh/helm/v3@$HELM_VERSION through the Go module proxy"
  client_go=$(sed -n 's|^[[:space:]]*k8s\.io/client-go \(v[0-9][0-9.]*\)[[:space:]]*$|\1|p' "$gomod" | head -n 1)
  [ -n "$client_go" ] || fail "found no k8s.io/client-go requirement in helm's go.mod ($gomod)"
  client_go="${client_go#v}"
  major=$(( ${client_go%%.*} + 1 ))
  minor="${client_go#*.}"; minor="${minor%%.*}"
  local v="helm.sh/helm/v3/internal/version" ldflags
  ldflags="-X $v.version=$HELM_VERSION -X $v.metadata= -X $v.gitTreeState=clean"
  ldflags+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$major -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
  ldflags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$major -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
  build_from_module helm "$HELM_VERSION" helm.sh/helm/v3 helm.sh/helm/v3/cmd/helm "$ldflags"
  reported "$bin" version --short | grep -q "^$HELM_VERSION\b" || fail "helm in $BIN_DIR does not report $HELM_VERSION"
  [ "$(helm_default_kube_version "$bin")" = "v$major.$minor.0" ] || fail "helm in $BIN_DIR does not assume Kubernetes v$major.$minor.0 by default"
}

# $TOOLS_DIR/crds/monitoring.coreos.com/<version>/*.yaml from the monitoring API module's types.
install_monitoring_crds() {
  local out="$TOOLS_DIR/crds/monitoring.coreos.com/$MONITORING_API_VERSION"
  if [ -f "$out/monitoring.coreos.com_servicemonitors.yaml" ] && [ -f "$out/monitoring.coreos.com_prometheusrules.yaml" ]; then
    return 0
  fi
  need_go "the Prometheus Operator CRDs $MONITORING_API_VERSION"
  local gen="$BIN_DIR/controller-gen"
  if ! reported "$gen" --version | grep -q "$CONTROLLER_TOOLS_VERSION\$"; then
    log "building controller-gen $CONTROLLER_TOOLS_VERSION into $BIN_DIR"
    GOBIN="$BIN_DIR" nice -n "$NICE" go install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION"
  fi
  log "generating the Prometheus Operator CRDs $MONITORING_API_VERSION into $out"
  local module="github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring@$MONITORING_API_VERSION"
  local moddir dir
  moddir=$(cd "$SRC_DIR" && GOFLAGS=-mod=mod go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$moddir" ] && [ -d "$moddir" ] || fail "could not download $module"
  dir=$(wrapper_dir monitoring-api "$MONITORING_API_VERSION")
  cp -r "$moddir/." "$dir/"
  chmod -R u+w "$dir"
  rm -rf "$out.tmp"
  (cd "$dir" && nice -n "$NICE" go mod download && "$gen" crd:crdVersions=v1,maxDescLen=0 paths=./v1 "output:crd:dir=$out.tmp") || fail "controller-gen failed"
  rm -rf "$out"
  mv "$out.tmp" "$out"
}

install_etcd
install_helm
install_kube_apiserver
install_monitoring_crds
