#!/bin/sh
# tools/assignment.sh - write an assignment hand-out from this tree.
#
#   sh tools/assignment.sh --steppers "midpoint rk4" [--systems "..."]
#                          [--keep "ralston2 examples/ralston.c"] --out DIR
#   (make assignment STEPPERS="midpoint rk4" [SYSTEMS=...] [KEEP=...] OUT=DIR)
#   sh tools/assignment.sh --skeleton FILE.c     (one stepper file, in place:
#                                                  e.g. an out-of-tree plugin's)
#
# DIR/handout/   a copy of the tree in which each named stepper's step
#                function is a skeleton: the file keeps its header comment
#                (the update formula and its reference), alloc and free, and
#                the step's body becomes /* YOUR CODE HERE */ returning
#                TS_ERR_NOT_IMPLEMENTED, so the hand-out builds, every command
#                runs, and the skeletons report "not implemented" (exit 1).
#                No answer is left in it:
#                - the built-ins with the one-step factor R(z) of a named
#                  stepper (measured on the solution: tstep amplification on
#                  both axes) are left out, their files and their lines in
#                  include/tstep/builtins.h;
#                - a file marked ANSWER-FILE(NAMES) in a comment, where NAMES
#                  holds a named stepper or one of those (examples/ralston.c:
#                  ralston2), is left out;
#                - a block between ANSWER-BEGIN(NAMES) and ANSWER-END comment
#                  lines, and a line ending in an ANSWER-LINE(NAMES) comment,
#                  is left out (a test's oracle written as the update, a doc's
#                  worked example; in Markdown a note says what went);
#                --keep NAMES|PATHS keeps those built-ins or files all the same.
#                It gains STUDENT.md (what to write, how to build, test and
#                self-grade; README.md points to it), grading.spec (the
#                targets: DIR/grading.spec without a like= or stages= that
#                names a stepper the hand-out lacks or that is a skeleton in
#                it) and tests/left_out.txt (the left-out built-ins, whose
#                checks the test runner skips, as it skips those of the
#                skeletons: tests/skip.c).
# DIR/solution/  the same tree unchanged: the instructor's solution.
# DIR/grading.spec  the expected values of the named steppers for
#                `tstep grade --spec`, measured on the solution
#                (tstep grade --write-spec: observed order rounded, stability
#                interval, energy behaviour).
# DIR/grade.sh  grade.sh SUBMISSION: the named stepper files of a student's
#                tree built into a plugin in a sandbox and graded by the
#                solution's grader in its sandbox (the instructor's grader,
#                not theirs; the student's code never runs inside it).
# DIR/README.txt what is where and the commands to grade.
#
# --systems names systems that the spec's checks should also cover: they are
# listed in README.txt for the student (the grader's battery itself runs on
# test1d, the oscillator and its own probe system).
#
# The copy leaves out build/, .git and DIR itself.  The solution is built
# (make build/tstep) to measure the spec; MAKEFLAGS such as -j2 and CFLAGS
# pass through, BUILD does not (the copies always build into their build/).
set -eu

steppers= systems= out= only= keep= regenerated=
while [ $# -gt 0 ]; do
    case $1 in
    --skeleton) only=$2; shift 2 ;;
    --steppers) steppers=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "assignment: unknown option '$1' (valid: --steppers, --systems, --keep, --out, --skeleton)" >&2; exit 2 ;;
    esac
done

# A stepper whose step is shared machinery defined elsewhere (an explicit
# Runge-Kutta method given by its Butcher tableau and stepped by
# ts_butcher_step): the file is rewritten as its header comment (the
# formula), a scratch alloc, a skeleton step and its type object without the
# tableau (the tableau is the answer).
regenerate() {
    file=$1 name=$2
    prefix=$(sed -n 's/^const ts_stepper_type \(ts_\)\{0,1\}\([A-Za-z0-9_]*\) *=.*/\2/p' "$file" | head -n 1)
    [ -n "$prefix" ] || { echo "assignment: $file: no 'const ts_stepper_type NAME = {'" >&2; exit 1; }
    awk -v name="$name" -v prefix="$prefix" '
        state == 0 { print; if (index($0, "*/")) { state = 1; body() } ; next }
        state == 1 && /^const ts_stepper_type / { state = 2; print; next }
        state == 2 && /^};/ { flush(); print; state = 3; next }
        state == 2 {
            if ($0 ~ /^    \./) { flush(); field = $0 } else { field = field "\n" $0 }
            next
        }
        function flush(    key, n, f, i, rest) {
            if (field == "") return
            key = field
            sub(/^    \./, "", key)
            sub(/[ =].*/, "", key)
            if (key == "tableau" || key == "reset" || key == "error") { field = ""; return }
            if (key == "alloc") field = "    .alloc = " prefix "_alloc,"
            if (key == "step") field = "    .step = " prefix "_step,"
            if (key == "free") field = "    .free = free,"
            if (key == "flags") { # of the solution engine, not the method: left out
                while ((i = index(field, "/*")) > 0) { # comments, a * inside them too
                    rest = substr(field, i + 2)
                    n = index(rest, "*/")
                    field = substr(field, 1, i - 1) (n ? substr(rest, n + 2) : "")
                }
                gsub(/\/\/[^\n]*/, "", field)
                gsub(/[()]/, "", field)
                sub(/^[ \t\n]*\.flags[ \t\n]*=/, "", field)
                sub(/,[ \t\n]*$/, "", field)
                n = split(field, f, /\|/)
                field = ""
                for (i = 1; i <= n; i++) {
                    gsub(/^[ \t\n]+|[ \t\n]+$/, "", f[i])
                    if (f[i] !~ /^TS_[A-Z0-9_]+$/) {
                        print "assignment: " FILENAME ": .flags: \"" f[i] "\" is not a TS_ flag" > "/dev/stderr"
                        exit 1
                    }
                    if (f[i] != "TS_ADAPTIVE" && f[i] != "TS_KEEPS_START")
                        field = field (field == "" ? "" : " | ") f[i]
                }
                if (field == "") return
                field = "    .flags = " field ","
            }
            print field
            field = ""
        }
        function body() {
            print "#include <stdlib.h>"
            print "#include \"tstep/linalg.h\""
            print "#include \"tstep/stepper.h\""
            print ""
            print "/* Scratch: NVEC vectors of the state'"'"'s length (Y, stage states, slopes),"
            print " * sized once; set NVEC to what the method needs. */"
            print "#define NVEC 8"
            print ""
            print "static int " prefix "_alloc(const ts_system *sys, const ts_solver_options *opt, void **scratch)"
            print "{"
            print "    (void)opt;"
            print "    return ts_scratch_vectors(sys, NVEC, scratch);"
            print "}"
            print ""
            print "static int " prefix "_step(void *scratch, ts_system *sys, double t, double h,"
            print "                     ts_step_stats *stats)"
            print "{"
            print "    /* YOUR CODE HERE: the update formula in the comment at the top of"
            print "     * this file.  Read the state with ts_system_get_y, evaluate F with"
            print "     * ts_system_deriv (forces at the state you hand it), write the new"
            print "     * state with ts_system_set_y; vectors from the scratch.  Delete the"
            print "     * two lines below. */"
            print "    (void)scratch, (void)sys, (void)t, (void)h, (void)stats;"
            print "    return ts_error(TS_ERR_NOT_IMPLEMENTED, \"stepper '"'"'" name "'"'"' is a skeleton\");"
            print "}"
            print ""
        }
        END { if (state != 3) exit 1 }
    ' "$file" > "$file.tmp" || { echo "assignment: $file: could not rewrite it as a skeleton" >&2; exit 1; }
    mv "$file.tmp" "$file"
}

# One line per built-in stepper of the solution: its name, then its one-step
# factor R at four points of each axis (tstep amplification, six decimals):
# two steppers with equal lines have the same R(z), and so the same order.
fingerprints() {
    for axis in real imag; do
        "$1" amplification --stepper all --axis $axis --z-max 1.7 --points 4 --format csv 2>/dev/null
    done | awk -F, '$1 != "stepper" {
        re = $3 + 0; im = $4 + 0
        if (re > -5e-7 && re < 5e-7) re = 0
        if (im > -5e-7 && im < 5e-7) im = 0
        fp[$1] = fp[$1] sprintf(" %.6f %.6f", re, im)
    }
    END { for (s in fp) print s fp[s] }'
}

in_list() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }

# the names (comma or space separated) in a marker hold one of $answers
names_hit() {
    for n in $(echo "$1" | tr ',' ' '); do in_list "$n" "$answers" && return 0; done
    return 1
}

# Leave the answers out of the hand-out $2, measured with the solution's
# tstep $1: the built-ins with an assigned stepper's R(z), the files marked
# ANSWER-FILE and the blocks and lines marked ANSWER-BEGIN/ANSWER-LINE
# (naming one of those), except what --keep names.  Sets $left_out.
leave_out_answers() {
    fp=$(fingerprints "$1")
    same=
    for s in $steppers; do
        mine=$(echo "$fp" | awk -v s="$s" '$1 == s { $1 = ""; print }')
        [ -n "$mine" ] || { echo "assignment: could not measure the R(z) of '$s' on the solution" >&2; exit 1; }
        same="$same $(echo "$fp" | awk -v f="$mine" -v s="$s" '{ n = $1; $1 = "" } $0 == f && n != s { print n }')"
    done
    answers=
    for n in $steppers $same; do in_list "$n" "$keep" || answers="$answers $n"; done
    left_out= removed_files=
    for n in $same; do
        in_list "$n" "$steppers $keep $left_out" || left_out="$left_out $n"
    done
    marked=$(cd "$2" && grep -rlE '^[[:space:]]*(/\*|\*|<!--|#)[[:space:]]*ANSWER-(FILE|BEGIN|LINE)\(|ANSWER-LINE\(' \
        --include='*.c' --include='*.h' --include='*.md' --include='*.sh' --include='*.gp' . |
        sed 's|^\./||' | grep -v '^tools/assignment\.sh$' || true)
    for f in $marked; do
        in_list "$f" "$keep" && continue
        names=$(sed -n 's/^[[:space:]]*\(\/\*\|\*\|<!--\|#\)[[:space:]]*ANSWER-FILE(\([^)]*\)).*/\2/p' "$2/$f" | head -n 1)
        if [ -n "$names" ] && names_hit "$names"; then
            sname=$(sed -n 's/.*\.name *= *"\([^"]*\)".*/\1/p' "$2/$f" | head -n 1)
            case $f in steppers/*.c)
                in_list "$sname" "$keep $steppers" && continue # kept, or assigned: a skeleton
                left_out="$left_out $sname" ;;
            esac
            removed_files="$removed_files $f"
            rm -f "$2/$f"
            continue
        fi
        strip_answers "$2/$f"
    done
    # a kept built-in with an assigned stepper's R(z): its like= in the student's spec
    likes=
    for s in $steppers; do
        mine=$(echo "$fp" | awk -v s="$s" '$1 == s { $1 = ""; print }')
        [ -n "$mine" ] || continue
        for k in $(echo "$fp" | awk -v f="$mine" -v s="$s" '{ n = $1; $1 = "" } $0 == f && n != s { print n }'); do
            in_list "$k" "$left_out $steppers" || { likes="$likes $s=$k"; break; }
        done
    done
    for n in $left_out; do
        f=$(cd "$2" && grep -l "\.name *= *\"$n\"" steppers/*.c 2>/dev/null | head -n 1 || true)
        if [ -n "$f" ]; then
            sym=$(sed -n 's/^const ts_stepper_type \(ts_[A-Za-z0-9_]*\) *=.*/\1/p' "$2/$f")
            rm -f "$2/$f"
            in_list "$f" "$removed_files" || removed_files="$removed_files $f"
        else
            sym=ts_$(echo "$n" | tr '-' '_')
        fi
        sed -i "/^TS_STEPPER($sym)\$/d" "$2/include/tstep/builtins.h"
    done
    : > "$2/tests/left_out.txt"
    for n in $left_out; do echo "$n" >> "$2/tests/left_out.txt"; done
}

# Drop from file $1 the blocks (ANSWER-BEGIN(NAMES) ... ANSWER-END) and
# lines (ending in an ANSWER-LINE(NAMES) comment) whose NAMES hold an
# answer; in Markdown a note stands where a block was.
strip_answers() {
    awk -v answers=" $answers " -v md="$(case $1 in *.md) echo 1 ;; esac)" '
        function hit(names,    a, n, i) {
            n = split(names, a, /[, ]+/)
            for (i = 1; i <= n; i++) if (a[i] != "" && index(answers, " " a[i] " ")) return 1
            return 0
        }
        function marker(line, kind,    m) {
            if (!match(line, kind "\\([^)]*\\)")) return ""
            m = substr(line, RSTART + length(kind) + 1, RLENGTH - length(kind) - 2)
            return m == "" ? " " : m
        }
        skip { if ($0 ~ /^[ \t]*(\/\*|\*|<!--|#)[ \t]*ANSWER-END/) skip = 0; next }
        /^[ \t]*(\/\*|\*|<!--|#)[ \t]*ANSWER-BEGIN\(/ {
            if (hit(marker($0, "ANSWER-BEGIN"))) {
                skip = 1
                if (md) print "*(The code of this example is left out of the hand-out: it would be an answer to the assignment.)*"
                else if ($0 ~ /^[ \t]*\*/) print " *     (an example left out of the hand-out: it would be an answer)"
            }
            next
        }
        /^[ \t]*(\/\*|\*|<!--|#)[ \t]*ANSWER-END/ { next }
        /ANSWER-LINE\([^)]*\)[ \t]*(\*\/|-->)?[ \t]*$/ { if (hit(marker($0, "ANSWER-LINE"))) next }
        { print }
    ' "$1" > "$1.tmp" && mv "$1.tmp" "$1"
}

# The student's spec: the lines of $1 without a like= or stages= reference
# that the hand-out cannot run (an assigned stepper, a skeleton there, or a
# left-out one): the instructor's grader (grade.sh) checks those.  A like=
# of a left-out stepper becomes a kept built-in with the same R(z), if any.
student_spec() {
    awk -v gone=" $steppers $left_out " -v likes=" $likes " '
        /^#/ { print; if (NR == 1) print "# the student'"'"'s copy: like= and stages= naming a stepper this hand-out lacks or\n# leaves to you are the instructor'"'"'s checks (grade.sh), not in this file"; next }
        {
            for (i = NF; i > 1; i--) {
                v = $i
                if (v !~ /^(like|stages)=/) continue
                sub(/^[a-z]*=/, "", v)
                if (!index(gone, " " v " ")) continue
                if ($i ~ /^like=/ && match(likes, " " $1 "=[^ ]+")) {
                    k = substr(likes, RSTART + length($1) + 2, RLENGTH - length($1) - 2)
                    sub($i, "like=" k)
                } else
                    sub(" +" $i, "")
            }
            print
        }' "$1"
}

# How many times the word $1 occurs in the code of file $2 (comments left out).
code_uses() {
    awk -v w="$1" '
        {
            line = $0; out = ""
            while (line != "") {
                if (incomment) {
                    if ((e = index(line, "*/")) == 0) { line = ""; break }
                    line = substr(line, e + 2); incomment = 0
                } else if ((b = index(line, "/*")) > 0) {
                    out = out substr(line, 1, b - 1) " "; line = substr(line, b + 2); incomment = 1
                } else { out = out line; line = "" }
            }
            while (match(out, "[A-Za-z0-9_]*" w "[A-Za-z0-9_]*")) {
                if (substr(out, RSTART, RLENGTH) == w) n++
                out = substr(out, RSTART + RLENGTH)
            }
        }
        END { print n + 0 }' "$2"
}

# Drop from file $1 the static functions nothing calls any more (helpers of
# the step whose body became a skeleton: the rest of the answer), each with
# the comment right above it, until none is left; a function is a line
# `static TYPE NAME(` at column 0 through the next line `}`.
prune_helpers() {
    while :; do
        dead=
        for fn in $(sed -n 's/^static [A-Za-z_][A-Za-z0-9_ ]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$1"); do
            [ "$(code_uses "$fn" "$1")" -eq 1 ] && { dead=$fn; break; }
        done
        [ -n "$dead" ] || return 0
        awk -v fn="$dead" '
            { line[NR] = $0 }
            END {
                for (i = 1; i <= NR; i++)
                    if (line[i] ~ "^static [A-Za-z_][A-Za-z0-9_ ]*[ *]" fn "\\(") { start = i; break }
                stop = start
                while (stop <= NR && line[stop] !~ /^\}/) stop++
                first = start
                if (first > 1 && line[first - 1] ~ /\*\/[ \t]*$/) {
                    first--
                    while (first > 1 && line[first] !~ /^\/\*/) first--
                }
                for (i = 1; i <= NR; i++) {
                    if (i >= first && i <= stop) continue
                    if (i == stop + 1 && line[i] == "" && first > 1 && line[first - 1] == "") continue
                    print line[i]
                }
            }' "$1" > "$1.tmp" && mv "$1.tmp" "$1"
    done
}

# Replace the body of the step function (the one `.step = FN` names) with
# the skeleton; the function's first line is `static int FN(`, its body
# runs from a line `{` to a line `}`.
skeleton() {
    file=$1 name=$2
    fn=$(sed -n 's/.*\.step *= *\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$file" | head -n 1)
    [ -n "$fn" ] || { echo "assignment: no '.step = FN' in $file" >&2; exit 1; }
    if ! grep -q "^static int $fn(" "$file"; then
        if grep -q "^$fn(\|[ *]$fn(" "$file"; then
            echo "assignment: $file: the step function '$fn' does not start a line 'static int $fn('" >&2
            exit 1
        fi
        regenerate "$file" "$name"
        regenerated="$regenerated $name"
        return
    fi
    awk -v fn="$fn" -v name="$name" '
        function params(sig,    inner, n, parts, i, p, out) {
            inner = sig
            sub(/^[^(]*\(/, "", inner)
            sub(/\)[^)]*$/, "", inner)
            n = split(inner, parts, ",")
            out = ""
            for (i = 1; i <= n; i++) {
                p = parts[i]
                gsub(/[ \t\n]+$/, "", p)
                if (match(p, /[A-Za-z_][A-Za-z0-9_]*$/))
                    out = out (out == "" ? "" : ", ") "(void)" substr(p, RSTART, RLENGTH)
            }
            return out
        }
        state == 0 && index($0, "static int " fn "(") == 1 { state = 1; sig = "" }
        state == 1 {
            print
            sig = sig " " $0
            if ($0 ~ /^\{/) {
                print "    /* YOUR CODE HERE: the update formula in the comment at the top of"
                print "     * this file.  Read the state with ts_system_get_y, evaluate F with"
                print "     * ts_system_deriv (forces at the state you hand it), write the new"
                print "     * state with ts_system_set_y; scratch comes from alloc.  Delete the"
                print "     * two lines below. */"
                print "    " params(sig) ";"
                print "    return ts_error(TS_ERR_NOT_IMPLEMENTED, \"stepper '\''" name "'\'' is a skeleton\");"
                state = 2
            }
            next
        }
        state == 2 { if ($0 ~ /^\}/) { print; state = 3 } ; next }
        { print }
        END { if (state != 3) exit 1 }
    ' "$file" > "$file.tmp" || { echo "assignment: $file: could not find the body of $fn" >&2; exit 1; }
    mv "$file.tmp" "$file"
    prune_helpers "$file"
}

if [ -n "$only" ]; then
    [ -f "$only" ] || { echo "assignment: --skeleton: no file '$only'" >&2; exit 2; }
    name=$(sed -n 's/.*\.name *= *"\([^"]*\)".*/\1/p' "$only" | head -n 1)
    [ -n "$name" ] || { echo "assignment: --skeleton: no '.name = \"...\"' in $only" >&2; exit 2; }
    skeleton "$only" "$name"
    exit 0
fi

[ -n "$steppers" ] || { echo "assignment: --steppers (make: STEPPERS=\"a b\") is required" >&2; exit 2; }
[ -n "$out" ] || { echo "assignment: --out (make: OUT=dir) is required" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# every named stepper must be a file in steppers/ with `.name = "NAME"`
for s in $steppers; do
    f=$(grep -l "\.name *= *\"$s\"" steppers/*.c 2>/dev/null | head -n 1 || true)
    if [ -z "$f" ]; then
        valid=$(sed -n 's/.*\.name *= *"\([^"]*\)".*/\1/p' steppers/*.c | tr '\n' ' ')
        echo "assignment: unknown stepper '$s' (valid: $valid)" >&2
        exit 2
    fi
done
for s in $systems; do
    grep -q "\.name *= *\"$s\"" systems/*.c 2>/dev/null || {
        valid=$(sed -n 's/.*\.name *= *"\([^"]*\)".*/\1/p' systems/*.c | tr '\n' ' ')
        echo "assignment: unknown system '$s' (valid: $valid)" >&2
        exit 2
    }
done
# --keep: built-in steppers (not the assigned ones) or files of the tree
for k in $keep; do
    case " $steppers " in *" $k "*)
        echo "assignment: --keep '$k': an assigned stepper is a skeleton, it cannot be kept" >&2; exit 2 ;;
    esac
    [ -f "$k" ] || grep -q "\.name *= *\"$k\"" steppers/*.c 2>/dev/null || {
        echo "assignment: --keep '$k': neither a built-in stepper nor a file of the tree" >&2; exit 2; }
done

if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
    echo "assignment: '$out' exists and is not empty" >&2
    exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# the tree, without build output, git data or the output directory
copy_tree() {
    mkdir -p "$1"
    excl=
    case $out/ in "$root"/*) excl="--exclude=./${out#"$root"/}" ;; esac
    tar -C "$root" --exclude=./build --exclude=./.git $excl -cf - . | tar -C "$1" -xf -
}
copy_tree "$out/solution"
copy_tree "$out/handout"

for s in $steppers; do
    f=$(grep -l "\.name *= *\"$s\"" "$out/handout"/steppers/*.c | head -n 1)
    skeleton "$f" "$s"
done

# the expected values, measured on the solution; its grade worker (which
# has no stepper of its own) runs the submissions
make -s -C "$out/solution" BUILD=build build/tstep build/tstep-grade-worker \
    >"$out/solution-build.log" 2>&1 || {
    cat "$out/solution-build.log" >&2
    echo "assignment: the solution does not build" >&2
    exit 1
}
rm -f "$out/solution-build.log"
list=$(echo $steppers | tr ' ' ',')
"$out/solution/build/tstep" grade --write-spec --stepper "$list" > "$out/grading.spec"
# a regenerated skeleton has no error estimate to write (TS_ADAPTIVE left
# out with the tableau): its method is graded without one
for s in $regenerated; do
    sed -i "/^$s /{s/flags=adaptive\([ ,]\|\$\)/flags=none\1/; s/,adaptive//; s/adaptive,//}" \
        "$out/grading.spec"
done
leave_out_answers "$out/solution/build/tstep" "$out/handout"
student_spec "$out/grading.spec" > "$out/handout/grading.spec"


files=
symbols=
for s in $steppers; do
    f=$(cd "$out/handout" && grep -l "\.name *= *\"$s\"" steppers/*.c | head -n 1)
    files="$files $f"
    symbols="$symbols $(sed -n 's/^const ts_stepper_type \(ts_[A-Za-z0-9_]*\) *=.*/\1/p' "$out/handout/$f")"
done
# grade.sh: a submission's stepper files built into a plugin (in a sandbox,
# under limits, the kit and the other submissions out of sight) and graded by
# the solution's grader, which runs the plugin in its own sandbox and never
# loads it into itself (docs/grading.md)
{
    echo '#!/bin/sh'
    echo '# grade.sh SUBMISSION [tstep grade options, e.g. --format json]'
    echo '# Builds the assignment'"'"'s stepper files of the SUBMISSION tree into a plugin'
    echo '# (a sandbox: bubblewrap, no network, 2 GB, 60 s of CPU) and grades it with'
    echo '# the solution'"'"'s grader: tstep grade --plugin ... --spec grading.spec.  Exit'
    echo '# status: that of tstep grade (2: a missing file, 1: it does not build).'
    echo 'set -eu'
    echo 'kit=$(cd "$(dirname "$0")" && pwd)'
    echo 'usage="usage: grade.sh SUBMISSION_DIR [tstep grade options, e.g. --format json]"'
    echo 'case "${1-}" in -h|--help) echo "$usage"; exit 0 ;; esac'
    echo '[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }'
    echo '[ -d "$1" ] || { echo "grade.sh: $1: not a folder (the student tree: its steppers/ holds the files)" >&2; echo "$usage" >&2; exit 2; }'
    echo 'sub=$(cd "$1" && pwd); shift'
    echo 'tmp=$(mktemp -d); trap '"'"'rm -rf "$tmp"'"'"' EXIT'
    echo 'mkdir "$tmp/src"'
    echo "for f in $files; do"
    echo '    # a regular file, read as such: a symbolic link (to the solution, say) is refused'
    echo '    if [ -L "$sub/$f" ] || [ ! -f "$sub/$f" ]; then'
    echo '        echo "grade.sh: $sub/$f is missing or not a regular file (symbolic links are refused)" >&2; exit 2'
    echo '    fi'
    echo '    cat < "$sub/$f" > "$tmp/src/$(basename "$f")"'
    echo 'done'
    echo '{'
    echo '    echo "#include <tstep/tstep.h>"'
    for y in $symbols; do echo "    echo \"extern const ts_stepper_type $y;\""; done
    printf '    echo "const ts_stepper_type *const tstep_plugin_steppers[] = {'
    for y in $symbols; do printf '&%s, ' "$y"; done
    echo 'NULL};"'
    echo '    echo "TSTEP_PLUGIN();"'
    echo '} > "$tmp/src/submission_plugin.c"'
    echo '# -Bsymbolic: the plugin'"'"'s own ts_NAME, not the grader'"'"'s built-in of that name'
    echo '# of the host only the compiler'"'"'s folders, read-only: no other file reaches the log'
    echo '# and none of the grader'"'"'s environment, nor /usr/local'
    echo 'env -i PATH=/usr/bin:/bin timeout -s KILL 120 bwrap --ro-bind /usr /usr --ro-bind-try /lib /lib --ro-bind-try /lib64 /lib64 \'
    echo '    --ro-bind-try /bin /bin --ro-bind-try /etc/alternatives /etc/alternatives \'
    echo '    --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache --tmpfs /usr/local --dev /dev --proc /proc --tmpfs /tmp \'
    echo '    --ro-bind "$kit/solution/include" /tmp/include --bind "$tmp/src" /tmp/src \'
    echo '    --unshare-all --die-with-parent --new-session --cap-drop ALL --chdir /tmp/src \'
    echo '    sh -c '"'"'ulimit -v 2097152; ulimit -t 60; ulimit -f 65536; exec cc -O2 -shared -fPIC -Wl,-Bsymbolic -I/tmp/include *.c -o submission.so'"'"' \'
    echo '    >"$tmp/build.log" 2>&1 || { head -c 20000 "$tmp/build.log" >&2; echo "grade.sh: the submission does not build" >&2; exit 1; }'
    echo 'st=0; "$kit/solution/build/tstep" grade --plugin "$tmp/src/submission.so" --spec "$kit/grading.spec" "$@" || st=$?'
    echo 'exit $st'
} > "$out/grade.sh"
chmod +x "$out/grade.sh"

# the student's guide in the hand-out, and README.md pointing to it
{
    echo "# Assignment: $(echo $steppers | sed 's/ /, /g')"
    echo
    echo "Write these time steppers in this copy of tstep. Each file opens with its"
    echo "method: the update formula and a reference. That comment is the assignment;"
    echo "the step function's body is \`/* YOUR CODE HERE */\` and returns \"not"
    echo "implemented\" until you write it."
    echo
    echo "| stepper | file |"
    echo "|---|---|"
    set -- $files
    for s in $steppers; do echo "| \`$s\` | [\`$1\`]($1) |"; shift; done
    echo
    echo "[docs/students.md](docs/students.md) explains the stepper interface (the"
    echo "first-order view Y' = F(t, Y), \`ts_system_deriv\`, scratch from \`alloc\`, no"
    echo "allocation in a step) and [docs/internals.md](docs/internals.md) the tree."
    if [ -n "$systems" ]; then
        echo "Try your steppers on these systems too: $systems."
    fi
    if [ -n "$(echo $left_out)" ]; then
        echo
        echo "Left out of this hand-out: the built-in steppers $(echo $left_out | sed 's/ /, /g'):"
        echo "each has an assigned stepper's R(z) or its update in code. The docs still"
        echo "name them; the checks that need them are skipped."
    fi
    echo
    echo "## Build and run"
    echo
    echo '```sh'
    echo "make                      # build/tstep"
    set -- $steppers
    echo "build/tstep run --system oscillator --stepper $1 --dt 0.1 --steps 10"
    echo '```'
    echo
    echo "A skeleton's run exits with status 1, \"not implemented\"."
    echo
    echo "## Test"
    echo
    echo '```sh'
    echo "make test                  # the Check suite"
    echo "make demo                  # the figures, in build/plots/"
    echo '```'
    echo
    echo "Until a stepper steps, the checks that need it are reported skipped"
    echo "(\`SKIP ... not implemented yet: NAME\`, and \`tests: N passed, 0 failed, N skipped\`)"
    echo "and \`make demo\` skips the figures that need it with a note. Once it steps"
    echo "they run: the stepper contract (order of its one-step factor, observed order,"
    echo "restoring the state after a failed step, pins) holds for yours as for every"
    echo "built-in."
    echo
    echo "## Grade yourself"
    echo
    echo '```sh'
    echo "build/tstep grade --spec grading.spec                # every assigned stepper"
    echo "build/tstep grade --spec grading.spec --stepper $1   # one"
    echo '```'
    echo
    echo "[grading.spec](grading.spec) holds each stepper's targets: its order (observed"
    echo "on the test equation, the oscillator and a forced problem, and of one step),"
    echo "its stability interval on x' = -kx, its energy behaviour on the undamped"
    echo "oscillator ([docs/grading.md](docs/grading.md) lists every check). A skeleton"
    echo "scores 0, every check failing with \"not implemented\"; exit status 0 means"
    echo "every check passed. Your instructor grades your stepper files with the same"
    echo "checks and those that compare with a reference method this hand-out does"
    echo "not have (\`amplification\`: R(z) against the reference's; \`stages\`: the"
    echo "stage states): they show as skipped here."
} > "$out/handout/STUDENT.md"
{
    echo "**This is an assignment hand-out: start with [STUDENT.md](STUDENT.md).**"
    echo
    cat "$out/handout/README.md"
} > "$out/handout/README.md.tmp" && mv "$out/handout/README.md.tmp" "$out/handout/README.md"

cat > "$out/README.txt" <<EOF
tstep assignment: steppers $steppers
${systems:+systems to try them on: $systems
}
handout/       give this to the students (STUDENT.md says what to do).  The
               steppers to write are the skeletons in:$files
               Each file's header comment gives the update formula; the step
               function's body is /* YOUR CODE HERE */ and returns "not
               implemented" until it is written.  make, then
                 build/tstep run --system oscillator --stepper NAME --dt 0.1 --steps 10
               runs it (exit 1 "not implemented" for a skeleton); make test
               passes, skipping the checks that need a skeleton; make demo
               skips their figures.
               Left out (an assigned stepper's R(z), or its update in code):
                 ${left_out:- (nothing)}${removed_files:+
               files:$removed_files}${keep:+
               kept by --keep: $keep}
               handout/grading.spec: the targets without the like=/stages=
               references the hand-out cannot run.
solution/      the complete tree (the instructor's solution).
grading.spec   the expected values, measured on the solution.

grade.sh       grades a student's tree with the solution's grader:
  sh grade.sh path/to/their/handout                 # a table, exit 0 when all pass
  sh grade.sh path/to/their/handout --format json   # one object per stepper
               (their stepper files are built into a plugin in a sandbox
               and run by solution/build/tstep in its own; a student's own
               build/tstep could have been changed to pass anything).  In their tree,
               build/tstep grade --spec grading.spec gives them the same
               report while they work.
A skeleton scores 0 (every check fails, the first with "not implemented");
the solution scores full marks.  See docs/grading.md.
EOF
echo "assignment: hand-out in $out/handout, solution in $out/solution, spec $out/grading.spec"
