#!/usr/bin/env bash
# The programs `npm test` needs from the machine, installed when missing (the way services.sh
# brings Kafka and PostgreSQL).
#
#   docker/local/tools.sh install      install what is missing (idempotent; silent when all is there)
#   docker/local/tools.sh check        say what is there and what is missing; install nothing
#   docker/local/tools.sh run CMD...   `install`, then CMD with .local/bin first on PATH
#
# Debian packages, installed as root (`apt-get update` only when one is missing):
#   Java 17, Maven and PostgreSQL 15 for the local services, unless KAFKA_BROKERS / DATABASE_URL
#   name services already running; prometheus and promtool (test/e2e/ops), docker-compose 1.29
#   (validates docker/compose.yml) and chromium (browser tests), without their recommendations.
# A Python venv in .local/venv with PYTHON_PACKAGES (the Standard Webhooks receiver of
# test/e2e/dispatcher/signing.spec.ts), and the Go module of its Go receiver in Go's module cache.
# helm, at HELM_VERSION, built with Go from the Go module proxy into .local/bin (git-ignored);
# $HELM, when set, names a helm to use instead.
# schemathesis, at SCHEMATHESIS_VERSION, from PyPI with pip into a Python venv in
# .local/schemathesis (git-ignored): test/e2e/admin/schemathesis.spec.ts runs it against the
# admin API (python3-venv is the Debian package it needs).
# What cannot be had (not root, no Go) stops the run here, with the command that installs it.
#
# SLUICE_GO names the go binary (default: go on PATH, else /usr/local/go/bin/go); a path that
# does not exist stands for a machine without Go.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN_DIR="$ROOT/.local/bin"
HELM_VERSION=v3.22.0
HELM_STAMP="$BIN_DIR/.helm-version"
# helm's go.mod at HELM_VERSION asks for this Go.
HELM_GO=1.26
SCHEMATHESIS_VERSION=4.32.5
SCHEMATHESIS_DIR="$ROOT/.local/schemathesis"

VENV_DIR="$ROOT/.local/venv"
VENV_STAMP="$VENV_DIR/.packages"
# The venv's packages, pinned: PyPI's official Standard Webhooks library.
PYTHON_PACKAGES=(standardwebhooks==1.1.0)
# The Go receiver's module (its dependency is the official Standard Webhooks Go library).
GO_VERIFIER_DIR="$ROOT/test/helpers/standard-webhooks/go"

log() { echo "[tools] $*" >&2; }

go_bin() {
  if [[ -n "${SLUICE_GO:-}" ]]; then
    echo "$SLUICE_GO"
  else
    command -v go || echo /usr/local/go/bin/go
  fi
}

helm_bin() { echo "${HELM:-$BIN_DIR/helm}"; }

helm_ok() {
  command -v "$(helm_bin)" >/dev/null || return 1
  # A helm of the user's choosing ($HELM) is taken as it is; ours must be the pinned version,
  # which a stamp records (`go install` leaves helm's own version string at major.minor).
  [[ -n "${HELM:-}" ]] && return 0
  [[ "$(cat "$HELM_STAMP" 2>/dev/null || true)" == "$HELM_VERSION" ]]
}

schemathesis_ok() {
  [[ "$("$SCHEMATHESIS_DIR/bin/schemathesis" --version 2>/dev/null || true)" == *" $SCHEMATHESIS_VERSION" ]]
}

install_schemathesis() {
  log "installing schemathesis $SCHEMATHESIS_VERSION into $SCHEMATHESIS_DIR (first run only)"
  rm -rf "$SCHEMATHESIS_DIR"
  python3 -m venv "$SCHEMATHESIS_DIR" >&2 &&
    "$SCHEMATHESIS_DIR/bin/pip" install --quiet "schemathesis==$SCHEMATHESIS_VERSION" >&2 || {
    log "error: installing schemathesis $SCHEMATHESIS_VERSION from PyPI failed (see above):"
    log "  python3 -m venv $SCHEMATHESIS_DIR && $SCHEMATHESIS_DIR/bin/pip install schemathesis==$SCHEMATHESIS_VERSION"
    exit 1
  }
}

chromium_works() {
  timeout 60 chromium --headless --no-sandbox --disable-gpu --dump-dom about:blank 2>/dev/null |
    grep -q '<body>'
}

# The Debian packages missing, each as "package:flag": flag "r" keeps recommendations.
missing_packages() {
  if [[ -z "${KAFKA_BROKERS:-}" ]]; then
    command -v java >/dev/null || echo openjdk-17-jre-headless:r
    command -v mvn >/dev/null || echo maven:r
  fi
  if [[ -z "${DATABASE_URL:-}" ]]; then
    [[ -x /usr/lib/postgresql/15/bin/postgres ]] || echo postgresql-15:r
  fi
  command -v prometheus >/dev/null && command -v promtool >/dev/null || echo prometheus:
  command -v docker-compose >/dev/null || echo docker-compose:
  command -v chromium >/dev/null || echo chromium:
  command -v python3 >/dev/null || echo python3:
  # `python3 -m venv` needs ensurepip, which Debian ships apart.
  python3 -c 'import ensurepip, venv' 2>/dev/null || echo python3-venv:
  return 0
}

# Splits "package:flag" entries into RECOMMENDS (flag r) and NO_RECOMMENDS.
split_packages() {
  RECOMMENDS=() NO_RECOMMENDS=()
  local p
  for p in "$@"; do
    if [[ "${p#*:}" == r ]]; then RECOMMENDS+=("${p%:*}"); else NO_RECOMMENDS+=("${p%:*}"); fi
  done
}

install_packages() {
  split_packages "$@"
  if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
    log "error: missing Debian packages: ${*%:*}"
    if [[ "$(id -u)" != 0 ]]; then
      log "installing them needs root; run as root (or with sudo):"
    else
      log "apt-get is not there; install them with your system's packages, or on Debian:"
    fi
    log "  apt-get update"
    ((${#RECOMMENDS[@]} == 0)) || log "  apt-get install -y ${RECOMMENDS[*]}"
    ((${#NO_RECOMMENDS[@]} == 0)) || log "  apt-get install -y --no-install-recommends ${NO_RECOMMENDS[*]}"
    exit 1
  fi
  log "installing ${*%:*}"
  export DEBIAN_FRONTEND=noninteractive
  # The lock timeout waits for another apt-get (a parallel run) instead of failing.
  local apt=(apt-get -q -o DPkg::Lock::Timeout=600)
  "${apt[@]}" update >&2
  ((${#RECOMMENDS[@]} == 0)) || "${apt[@]}" install -y "${RECOMMENDS[@]}" >&2
  ((${#NO_RECOMMENDS[@]} == 0)) || "${apt[@]}" install -y --no-install-recommends "${NO_RECOMMENDS[@]}" >&2
}

# Go's name for this machine's architecture, as in its download file names.
go_arch() {
  case "$(uname -m)" in
    x86_64) echo amd64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) uname -m ;;
  esac
}

install_helm() {
  local go command="GOBIN=$BIN_DIR go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  go="$(go_bin)"
  if [[ ! -x "$go" ]]; then
    log "error: helm $HELM_VERSION is missing (test/integration/ops/helm.spec.ts), and Go, which builds it, is not found."
    log "install Go $HELM_GO or newer (https://go.dev/dl/), then run again; into /usr/local/go:"
    log "  curl -fsSL https://go.dev/dl/go$HELM_GO.0.linux-$(go_arch).tar.gz | tar -C /usr/local -xz"
    log "(SLUICE_GO names a go elsewhere than on PATH or in /usr/local/go/bin; HELM names a helm $HELM_VERSION you have.)"
    exit 1
  fi
  log "building helm $HELM_VERSION into $BIN_DIR (first run only)"
  GOBIN="$BIN_DIR" "$go" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2 || {
    log "error: building helm $HELM_VERSION failed (see above; it needs Go $HELM_GO or newer):"
    log "  $command"
    exit 1
  }
  echo "$HELM_VERSION" >"$HELM_STAMP"
}

venv_ok() {
  [[ -x "$VENV_DIR/bin/python" ]] &&
    [[ "$(cat "$VENV_STAMP" 2>/dev/null || true)" == "${PYTHON_PACKAGES[*]}" ]]
}

install_venv() {
  log "making the Python venv $VENV_DIR with ${PYTHON_PACKAGES[*]}"
  python3 -m venv "$VENV_DIR" >&2
  "$VENV_DIR/bin/pip" install -q --disable-pip-version-check "${PYTHON_PACKAGES[@]}" >&2 || {
    log "error: installing ${PYTHON_PACKAGES[*]} from PyPI failed (see above)"
    exit 1
  }
  echo "${PYTHON_PACKAGES[*]}" >"$VENV_STAMP"
}

# Whether the Go receiver's module is in the module cache (no network asked).
go_module_ok() {
  [[ -x "$(go_bin)" ]] || return 1
  (cd "$GO_VERIFIER_DIR" && GOPROXY=off GOFLAGS=-mod=mod "$(go_bin)" mod download >/dev/null 2>&1)
}

install_go_module() {
  if [[ ! -x "$(go_bin)" ]]; then
    log "error: Go is not found; it builds the Standard Webhooks Go receiver (test/helpers/standard-webhooks/go)."
    log "install Go 1.21 or newer (https://go.dev/dl/); SLUICE_GO names a go elsewhere than on PATH or in /usr/local/go/bin."
    exit 1
  fi
  log "fetching the Go modules of $GO_VERIFIER_DIR"
  (cd "$GO_VERIFIER_DIR" && "$(go_bin)" mod download >&2) || {
    log "error: go mod download in $GO_VERIFIER_DIR failed (see above)"
    exit 1
  }
}

install() {
  local packages
  mapfile -t packages < <(missing_packages)
  if ((${#packages[@]} == 0)) && helm_ok && venv_ok && go_module_ok && schemathesis_ok; then return; fi
  # One run installs at a time; the others find the work done.
  mkdir -p "$BIN_DIR"
  exec 9>"$ROOT/.local/tools.lock"
  flock 9
  mapfile -t packages < <(missing_packages)
  if ((${#packages[@]} > 0)); then
    install_packages "${packages[@]}"
    if [[ " ${packages[*]} " == *" chromium: "* ]] && ! chromium_works; then
      log "error: chromium was installed but does not render a page headless:"
      log "  chromium --headless --no-sandbox --disable-gpu --dump-dom about:blank"
      exit 1
    fi
  fi
  if ! helm_ok; then
    if [[ -n "${HELM:-}" ]]; then
      log "error: HELM=$HELM names no program; unset it to use (and build) $BIN_DIR/helm."
      exit 1
    fi
    install_helm
  fi
  venv_ok || install_venv
  go_module_ok || install_go_module
  schemathesis_ok || install_schemathesis
  exec 9>&-
}

check() {
  local packages status=0 p
  mapfile -t packages < <(missing_packages)
  for p in "${packages[@]}"; do echo "missing: Debian package ${p%:*}"; done
  ((${#packages[@]} == 0)) || status=1
  if helm_ok; then echo "helm: $(command -v "$(helm_bin)")"; else
    echo "missing: helm $HELM_VERSION at $(helm_bin)"
    status=1
  fi
  if schemathesis_ok; then echo "schemathesis: $SCHEMATHESIS_DIR/bin/schemathesis"; else
    echo "missing: schemathesis $SCHEMATHESIS_VERSION in $SCHEMATHESIS_DIR"
    status=1
  fi
  if [[ -x "$(go_bin)" ]]; then echo "go: $(go_bin)"; else echo "go: not found (needed to build helm and the Standard Webhooks Go receiver)"; fi
  if venv_ok; then echo "python venv: $VENV_DIR (${PYTHON_PACKAGES[*]})"; else
    echo "missing: the Python venv $VENV_DIR with ${PYTHON_PACKAGES[*]}"
    status=1
  fi
  if go_module_ok; then echo "go modules of $GO_VERIFIER_DIR: fetched"; else
    echo "missing: the Go modules of $GO_VERIFIER_DIR"
    status=1
  fi
  if command -v chromium >/dev/null; then
    if chromium_works; then echo "chromium: $(command -v chromium) (renders headless)"; else
      echo "chromium: $(command -v chromium) does not render headless"
      status=1
    fi
  fi
  return "$status"
}

case "${1:-}" in
  install)
    install
    echo "PATH=$BIN_DIR:\$PATH"
    ;;
  check) check ;;
  run)
    shift
    [[ $# -gt 0 ]] || { echo "usage: $0 run COMMAND [ARGS...]" >&2; exit 2; }
    install
    export PATH="$BIN_DIR:$PATH"
    exec "$@"
    ;;
  *) echo "usage: $0 install|check|run COMMAND..." >&2; exit 2 ;;
esac
