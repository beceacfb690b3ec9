#!/bin/sh
# tools/function_length.sh [MAX] - list the functions of the library, the
# steppers, the systems and the PETSc bridge longer than MAX lines (default
# 80), from the line of their name to their closing brace; exit 1 if any.
# Functions are recognised as the project writes them: the opening brace
# alone on a line at column 0, the closing one likewise.
set -eu
max=${1:-80}
cd "$(dirname "$0")/.."
awk -v max="$max" '
    FNR == 1 { head = 0 }
    /^\{$/ { start = head ? head : FNR; name = sig; inside = 1; next }
    /^\}/ && inside {
        n = FNR - start + 1
        if (n > max) { printf "%s:%d: %s: %d lines\n", FILENAME, start, name, n; bad = 1 }
        inside = 0; head = 0; next
    }
    !inside {
        if ($0 ~ /^[A-Za-z_].*\(/ && $0 !~ /;[ \t]*$/) { head = FNR; sig = $0; sub(/\(.*/, "", sig); n = split(sig, w, /[ *]+/); sig = w[n] }
        else if ($0 ~ /^$/ || $0 ~ /;[ \t]*$/ || $0 ~ /^#/ || $0 ~ /^\//) head = 0
    }
    END { exit bad }
' src/*/*.c steppers/*.c systems/*.c petsc/*.c && echo "functions: none over $max lines"
