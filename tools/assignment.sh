#!/bin/sh
# tools/assignment.sh - write an assignment hand-out from this tree.
#
#   sh tools/assignment.sh --steppers "midpoint rk4" [--systems "..."] --out DIR
#   (make assignment STEPPERS="midpoint rk4" [SYSTEMS=...] OUT=DIR)
#   sh tools/assignment.sh --skeleton FILE.c     (one stepper file, in place:
#                                                  e.g. an out-of-tree plugin's)
#
# DIR/handout/   a copy of the tree in which each named stepper's step
#                function is a skeleton: the file keeps its header comment
#                (the update formula and its reference), alloc and free, and
#                the step's body becomes /* YOUR CODE HERE */ returning
#                TS_ERR_NOT_IMPLEMENTED, so the hand-out builds, every command
#                runs, and the skeletons report "not implemented" (exit 1).
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

steppers= systems= out= only=
while [ $# -gt 0 ]; do
    case $1 in
    --skeleton) only=$2; shift 2 ;;
    --steppers) steppers=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "assignment: unknown option '$1' (valid: --steppers, --systems, --out, --skeleton)" >&2; exit 2 ;;
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
        function flush(    key) {
            if (field == "") return
            key = field
            sub(/^    \./, "", key)
            sub(/[ =].*/, "", key)
            if (key == "tableau" || key == "reset" || key == "error") { field = ""; return }
            if (key == "alloc") field = "    .alloc = " prefix "_alloc,"
            if (key == "step") field = "    .step = " prefix "_step,"
            if (key == "free") field = "    .free = free,"
            if (key == "flags") {
                gsub(/TS_ADAPTIVE *\| */, "", field)
                gsub(/ *\| *TS_ADAPTIVE/, "", field)
                if (field ~ /\.flags = TS_ADAPTIVE,/) { field = ""; return }
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

# the expected values, measured on the solution
make -s -C "$out/solution" BUILD=build build/tstep >"$out/solution-build.log" 2>&1 || {
    cat "$out/solution-build.log" >&2
    echo "assignment: the solution does not build" >&2
    exit 1
}
rm -f "$out/solution-build.log"
list=$(echo $steppers | tr ' ' ',')
"$out/solution/build/tstep" grade --write-spec --stepper "$list" > "$out/grading.spec"


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
    echo '[ $# -ge 1 ] && [ -d "$1" ] || { echo "usage: grade.sh SUBMISSION_DIR [options]" >&2; exit 2; }'
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
    echo 'timeout -s KILL 120 bwrap --ro-bind /usr /usr --ro-bind-try /lib /lib --ro-bind-try /lib64 /lib64 \'
    echo '    --ro-bind-try /bin /bin --ro-bind-try /etc/alternatives /etc/alternatives \'
    echo '    --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache --dev /dev --proc /proc --tmpfs /tmp \'
    echo '    --ro-bind "$kit/solution/include" /tmp/include --bind "$tmp/src" /tmp/src \'
    echo '    --unshare-all --die-with-parent --new-session --cap-drop ALL --chdir /tmp/src \'
    echo '    sh -c '"'"'ulimit -v 2097152; ulimit -t 60; ulimit -f 65536; exec cc -O2 -shared -fPIC -Wl,-Bsymbolic -I/tmp/include *.c -o submission.so'"'"' \'
    echo '    >"$tmp/build.log" 2>&1 || { head -c 20000 "$tmp/build.log" >&2; echo "grade.sh: the submission does not build" >&2; exit 1; }'
    echo 'st=0; "$kit/solution/build/tstep" grade --plugin "$tmp/src/submission.so" --spec "$kit/grading.spec" "$@" || st=$?'
    echo 'exit $st'
} > "$out/grade.sh"
chmod +x "$out/grade.sh"

cat > "$out/README.txt" <<EOF
tstep assignment: steppers $steppers
${systems:+systems to try them on: $systems
}
handout/       give this to the students.  The steppers to write are the
               skeletons in:$files
               Each file's header comment gives the update formula; the step
               function's body is /* YOUR CODE HERE */ and returns "not
               implemented" until it is written.  make, then
                 build/tstep run --system oscillator --stepper NAME --dt 0.1 --steps 10
               runs it (exit 1 "not implemented" for a skeleton).
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
