#!/bin/sh
# Install the Debian packages named as arguments when any is missing.
# Uses apt-get directly as root, sudo otherwise; without either it stops
# with the exact command to run.
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing"
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "deps: missing packages; run as root: apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: no apt-get here; install these packages by hand:$missing" >&2
    exit 1
fi
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing ||
    { echo "deps: install failed; run: ${SUDO:+sudo }apt-get update && ${SUDO:+sudo }apt-get install -y$missing" >&2; exit 1; }
