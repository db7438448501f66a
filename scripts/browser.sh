#!/usr/bin/env bash
# Make sure Debian's Chromium and ChromeDriver are installed (the board's
# browser tests drive them over WebDriver), and print where they are:
#   chromium=/usr/bin/chromium
#   chromedriver=/usr/bin/chromedriver
# As root with apt-get, missing packages are installed; otherwise a missing
# browser is an error naming the packages. apt waits up to 5 minutes for
# its lock: .ci/run provisions the reference target in the background,
# which may be installing cmake with apt at the same time.
set -euo pipefail

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "browser.sh: installing chromium and chromium-driver with apt-get" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get -o DPkg::Lock::Timeout=300 install -y chromium chromium-driver >&2 || { apt-get -o DPkg::Lock::Timeout=300 update >&2 && apt-get -o DPkg::Lock::Timeout=300 install -y chromium chromium-driver >&2; }
    else
        echo "browser.sh: chromium and chromedriver are needed (Debian packages chromium, chromium-driver)" >&2
        exit 1
    fi
fi
echo "chromium=$(command -v chromium)"
echo "chromedriver=$(command -v chromedriver)"
