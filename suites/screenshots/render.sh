#!/usr/bin/env bash
# Render every html/NN-<slug>.html to items/NN-<slug>.png with headless
# Chromium, at the size declared in the page's
#   <meta name="viewport-size" content="WxH">
# Usage: suites/screenshots/render.sh [html/NN-slug.html ...]   (default: all)
# Chromium comes from scripts/browser.sh (Debian chromium). The pages are
# self-contained (no network, installed fonts only: DejaVu, Liberation).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -n "$chromium" ] || { echo "render.sh: chromium not found (run scripts/browser.sh)" >&2; exit 1; }
mkdir -p "$here/items"
if [ "$#" -gt 0 ]; then pages=("$@"); else pages=("$here"/html/*.html); fi
for page in "${pages[@]}"; do
    page="$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
    name="$(basename "$page" .html)"
    size="$(grep -o '<meta name="viewport-size" content="[0-9]*x[0-9]*"' "$page" | grep -o '[0-9]*x[0-9]*' || true)"
    [ -n "$size" ] || { echo "render.sh: $name has no viewport-size meta tag" >&2; exit 1; }
    w="${size%x*}"; h="${size#*x}"
    profile="$(mktemp -d)"
    out="$here/items/$name.png"
    rm -f "$out"
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --user-data-dir="$profile" --hide-scrollbars \
        --force-device-scale-factor=1 --window-size="$w,$h" \
        --screenshot="$out" "file://$page" >/dev/null 2>&1 || true
    rm -rf "$profile"
    [ -s "$out" ] || { echo "render.sh: $name did not render" >&2; exit 1; }
    echo "$name ${w}x${h} $(stat -c %s "$out") bytes"
done
