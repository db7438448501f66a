#!/usr/bin/env bash
# Make sure Debian's Chromium and ChromeDriver are installed (the board's
# browser tests drive them over WebDriver), and print where they are:
#   chromium=/usr/bin/chromium
#   chromedriver=/usr/bin/chromedriver
# As root with apt-get, missing packages are installed; otherwise a missing
# browser is an error naming the packages.
set -euo pipefail

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "browser.sh: installing chromium and chromium-driver with apt-get" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y chromium chromium-driver >&2 || { apt-get update >&2 && apt-get install -y chromium chromium-driver >&2; }
    else
        echo "browser.sh: chromium and chromedriver are needed (Debian packages chromium, chromium-driver)" >&2
        exit 1
    fi
fi
echo "chromium=$(command -v chromium)"
echo "chromedriver=$(command -v chromedriver)"
