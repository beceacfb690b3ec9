#!/bin/sh
# tools/deps.sh PKG... - install the Debian packages named as arguments when
# any is missing (apt-get as root, sudo otherwise).
#
# Without dpkg/apt (another distribution, macOS, a container without apt)
# nothing is installed: the script prints the Debian names of what the build
# needs and checks the tools themselves (a C compiler, make, pkg-config with
# the Check library, gnuplot); present, it continues (exit 0), so `make test`
# runs; absent, it names them and stops (exit 1).  xvfb, xauth and x11-apps
# are optional there: the test of the live window says it is skipped.
check_tools() {
    bad=""
    command -v "${CC:-cc}" >/dev/null 2>&1 || bad="$bad a C compiler (${CC:-cc});"
    command -v make >/dev/null 2>&1 || bad="$bad make;"
    if command -v pkg-config >/dev/null 2>&1; then
        pkg-config --exists check || bad="$bad the Check unit-test library (pkg-config check);"
    else
        bad="$bad pkg-config;"
    fi
    command -v gnuplot >/dev/null 2>&1 || bad="$bad gnuplot (for make plots, make demo, --plot);"
    if [ -n "$bad" ]; then
        echo "deps: missing:$bad install them with your package manager" >&2
        exit 1
    fi
    echo "deps: the compiler, make, pkg-config, Check and gnuplot are present; continuing"
    exit 0
}

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: no dpkg here; the build needs (Debian names): $*"
    check_tools
fi
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: no apt-get here; install these packages by hand:$missing"
    check_tools
fi
echo "deps: installing:$missing"
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "deps: missing packages; run as root: apt-get update && apt-get install -y$missing" >&2
    check_tools
fi
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing ||
    { echo "deps: install failed; run: ${SUDO:+sudo }apt-get update && ${SUDO:+sudo }apt-get install -y$missing" >&2; exit 1; }
