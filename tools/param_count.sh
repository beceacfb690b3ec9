#!/bin/sh
# tools/param_count.sh [MAX] [DIR]... - list the functions defined in the C
# files (.c and .h) under each DIR (default: the library, the steppers, the
# systems and the PETSc bridge: src steppers systems petsc, from the top of
# the tree) that take more than MAX parameters (default 6); exit 1 if any.
# The house rule: an option struct that names the thing, not a long
# parameter list.  Functions are recognised as the project writes them (as
# tools/function_length.sh does): the signature from a line at column 0 with
# a '(' to the opening brace alone on a line at column 0.  Parameters are the
# commas at the top level of the signature's parentheses plus one; '(void)'
# and '()' are none, and a function pointer's own parameters do not count;
# __attribute__((...)) groups are left out.
# A callback whose signature a library fixes is not counted when the
# comment just above it says so: "(its signature is PETSc's)".
set -eu
max=6
case ${1-} in
'' | *[!0-9]*) ;;
*) max=$1; shift ;;
esac
if [ $# -eq 0 ]; then
    cd "$(dirname "$0")/.."
    set -- src steppers systems petsc
fi
for d in "$@"; do
    [ -d "$d" ] || { echo "param_count.sh: $d: no such directory" >&2; exit 2; }
done
files=$(find "$@" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
[ -n "$files" ] || { echo "param_count.sh: no C files under $*" >&2; exit 2; }
# shellcheck disable=SC2086 # the file names are split on purpose (none has a space)
awk -v max="$max" '
    # the parameters of a signature: top-level commas inside its first parentheses
    function count(sig,    i, c, depth, n, body) {
        i = index(sig, "(")
        depth = 0; n = 0; body = ""
        for (; i <= length(sig); i++) {
            c = substr(sig, i, 1)
            if (c == "(") { depth++; if (depth == 1) continue }
            else if (c == ")") { depth--; if (depth == 0) break }
            else if (c == "," && depth == 1) n++
            if (depth >= 1) body = body c
        }
        gsub(/[ \t]/, "", body)
        return body == "" || body == "void" ? 0 : n + 1
    }
    # the signature without its __attribute__((...)) groups, whose
    # parentheses come before the parameters
    function plain(sig,    at, i, c, depth) {
        while ((at = index(sig, "__attribute__")) > 0) {
            i = at + length("__attribute__"); depth = 0
            for (; i <= length(sig); i++) {
                c = substr(sig, i, 1)
                if (c == "(") depth++
                else if (c == ")") { depth--; if (depth == 0) break }
            }
            sig = substr(sig, 1, at - 1) substr(sig, i + 1)
        }
        return sig
    }
    FNR == 1 { head = 0 }
    /^\{$/ {
        if (head) {
            sig = plain(sig)
            name = sig; sub(/\(.*/, "", name); k = split(name, w, /[ *]+/); name = w[k]
            n = count(sig)
            if (n > max && fixed != head - 1) { printf "%s:%d: %s: %d parameters\n", FILENAME, head, name, n; bad = 1 }
        }
        head = 0; next
    }
    /its signature is [A-Za-z]+.s\)/ { fixed = FNR }
    /^ \*/ && fixed == FNR - 1 { fixed = FNR }
    /^[A-Za-z_].*\(/ && !/;[ \t]*$/ { head = FNR; sig = $0; next }
    /^$/ || /;[ \t]*$/ || /^#/ || /^\// { head = 0; next }
    head { sig = sig " " $0 }
    END { exit bad }
' $files && echo "functions: none over $max parameters"
