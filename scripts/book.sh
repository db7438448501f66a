#!/usr/bin/env bash
# The book (docs/, an mdBook), built with warnings denied.
#
# Usage: book.sh install   install the pinned mdBook when it is missing or another version
#        book.sh [build]   install it when needed, then build docs/ into target/book/
#
# mdBook is pinned by version and built without its default features
# (serve, watch and the search index: `mdbook build` is all CI needs), once
# per machine, into cargo's bin folder: about 5 minutes on 2 cores. mdBook
# exits 0 on much that is wrong (an include that fails, a bad [output.html]
# key falls back to defaults): any WARN or ERROR line it logs fails here.
# Links and anchors are checked by the docs tests (cargo test --test docs).
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.5.4
command=${1:-build}
log() { printf 'book.sh: %s\n' "$*" >&2; }

installed() { command -v mdbook >/dev/null && [ "$(mdbook --version 2>/dev/null)" = "mdbook v$version" ]; }

install() {
  installed && return 0
  log "installing mdbook $version (cargo install --no-default-features --locked; about 5 minutes on 2 cores)"
  cargo install mdbook --version "=$version" --no-default-features --locked --quiet >&2
  installed || { log "mdbook $version is still not on PATH after cargo install ($(command -v mdbook || echo none))"; exit 1; }
}

case $command in
install) install ;;
build)
  install
  out=target/book
  logfile=$(mktemp)
  trap 'rm -f "$logfile"' EXIT
  # docs/book.toml: build-dir = "../target/book"
  if ! mdbook build docs >"$logfile" 2>&1; then
    cat "$logfile" >&2
    log "mdbook build failed"
    exit 1
  fi
  if grep -E '(WARN|ERROR)' "$logfile" >&2; then
    log "mdbook build logged the warnings above: warnings are denied"
    exit 1
  fi
  [ -s "$out/index.html" ] || { log "no $out/index.html after mdbook build"; exit 1; }
  log "built the book into $out/ ($(find "$out" -name '*.html' | wc -l) pages)"
  ;;
*) log "usage: book.sh [install|build]"; exit 2 ;;
esac
