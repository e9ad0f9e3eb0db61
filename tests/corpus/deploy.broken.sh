#!/usr/bin/env bash
# deploy.sh - build and ship; exercises case patterns, heredocs and $# / ${#x}.
set -euo pipefail

readonly APP="shop"
declare -a TARGETS=("web" "worker")

log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

usage() {
  cat <<EOF
Usage: $0 [build|ship] (default: build)
Don't forget: targets are ${TARGETS[*]} {
EOF
}

build() {
  local count=${#TARGETS[@]}
  log "building $count targets (args: $#)"
  for t in "${TARGETS[@]}"; do
    if [[ -d "src/$t" ]]; then
      (cd "src/$t" && make all || return 1
    fi
  done
}

ship() {
  local dest="${1:-prod}"
  case "$dest" in
    prod|production) log "shipping to production" ;;
    staging) log 'staging (beta)' ;;
    *) log "unknown: $dest"; return 2 ;;
  esac
  echo "done: it\'s shipped" # a comment with ( and {
}

main() {
  case "${1:-build}" in
    build) build ;;
    ship) ship "${2:-}" ;;
    -h|--help) usage ;;
  esac
}

main "$@"
