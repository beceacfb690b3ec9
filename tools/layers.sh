#!/bin/sh
# tools/layers.sh [BUILD] - check that every arrow of the library points down.
#
# The layers, lowest first (docs/internals.md draws them):
#   0 src/core      1 src/linear, src/springs      2 src/methods
#   3 steppers/, systems/      4 src/analysis      5 src/cli, src/ext
# (src/ext, the extension libtstep-ext, is found by the core at run time by
# name, core/ext.h: no call of the core's points to it)
# A file may use its own folder and any folder of a lower rank; folders of
# the same rank never use each other.  Two kinds of arrow are checked:
#   - includes: each public header include/tstep/NAME.h belongs to a layer
#     (the table below), and a source file may include only headers of its
#     own layer or below;
#   - calls: every undefined symbol of an object in BUILD (default build) is
#     looked up among the symbols the other objects define.
# Prints each arrow that points up or sideways and exits 1 if there is one.
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."

# folder -> rank, and public header -> folder
rank() {
    case $1 in
    src/core) echo 0 ;; src/linear | src/springs) echo 1 ;; src/methods) echo 2 ;;
    steppers | systems) echo 3 ;; src/analysis) echo 4 ;; src/cli | src/ext) echo 5 ;; *) echo 9 ;;
    esac
}
header_layer() {
    case $1 in
    status | system | stepper | linalg | params | numfmt | version) echo src/core ;;
    linsolve | linsolvers) echo src/linear ;;
    springs | obj) echo src/springs ;;
    implicit | butcher) echo src/methods ;;
    *) echo src/analysis ;; # run stability spectrum reference phase check grade builtins tstep
    esac
}
# an arrow from folder $1 to folder $2 is allowed
allowed() {
    [ "$1" = "$2" ] && return 0
    [ "$(rank "$2")" -lt "$(rank "$1")" ]
}

bad=0
sources=$(ls src/*/*.c src/*/*.h steppers/*.c systems/*.c)
for f in $sources; do
    from=$(dirname "$f")
    for h in $(sed -n 's|^#include "tstep/\([a-z_]*\)\.h".*|\1|p' "$f"); do
        to=$(header_layer "$h")
        allowed "$from" "$to" || { echo "include: $f -> tstep/$h.h ($to)"; bad=1; }
    done
    for h in $(sed -n 's|^#include "\([a-z]*\)/[a-z_0-9]*\.h".*|\1|p' "$f" | grep -vx tstep); do
        allowed "$from" "src/$h" || { echo "include: $f -> src/$h"; bad=1; }
    done
done

# the programs' mains (src/cli/main.o, worker_main.o) define malloc and its
# siblings: left out
objs=$(ls "$build"/src/*/*.o "$build"/steppers/*.o "$build"/systems/*.o 2>/dev/null |
       grep -v '/src/cli/\(worker_\)\{0,1\}main\.o$') ||
    { echo "layers: no objects under $build; run make first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in $objs; do
    d=$(dirname "${o#"$build"/}")
    nm -g --defined-only "$o" | awk -v d="$d" '{ print $3, d }' >> "$tmp/defs"
    nm -u "$o" | awk -v o="$o" -v d="$d" '{ print $2, o, d }' >> "$tmp/uses"
done
sort -u "$tmp/defs" > "$tmp/defs.s"
sort "$tmp/uses" > "$tmp/uses.s"
# symbol, object, its folder, the defining folder
join "$tmp/uses.s" "$tmp/defs.s" > "$tmp/arrows"
while read -r sym o from to; do
    allowed "$from" "$to" || { echo "call: $o -> $sym ($to)"; bad=1; }
done < "$tmp/arrows"
[ "$bad" = 0 ] && echo "layers: every include and call points to its own layer or below"
exit "$bad"
