#!/bin/sh
# tools/plots.sh - make every figure: run build/tstep for the data, then
# render plots/*.gp with gnuplot.  `make plots` and `make demo` run it.
#
#   tools/plots.sh [--quick] [--out DIR]
#
# Data go to DIR/data (default DIR: build/plots), figures to DIR: each
# script as NAME.png (pngcairo) and NAME.svg, the animations as NAME.gif.
# The order table (sweep) and the dt_crit table (stability) are printed on
# standard error as they are measured.  --quick makes smaller runs (fewer
# levels, frames and particles), for the test suite: same scripts, same
# files.  Environment: TSTEP (default build/tstep), GNUPLOT (gnuplot).
# In an assignment's hand-out (tools/assignment.sh) the assigned steppers are
# skeletons and some built-ins are left out: the figures over every stepper
# show the implemented ones, and a figure that needs a particular stepper
# that is a skeleton or absent is skipped with a note naming it.
set -eu
TSTEP=${TSTEP:-build/tstep}
GNUPLOT=${GNUPLOT:-gnuplot}
out=build/plots
quick=0
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    *) echo "usage: tools/plots.sh [--quick] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done
data=$out/data
mkdir -p "$data"
rm -f "$out"/*.png "$out"/*.svg "$out"/*.gif  # figures of an earlier run
here=$(cd "$(dirname "$0")/.." && pwd)

section() { printf '\n== %s\n' "$*" >&2; }
run() { # echo the command, then run it; say its wall time when 2 s or more
    echo "\$ $*" | sed "s|$data|\$DATA|g" >&2
    t0=$(date +%s)
    "$@"
    rc=$?
    t1=$(date +%s)
    [ $((t1 - t0)) -lt 2 ] || echo "   ($((t1 - t0)) s)" >&2
    return $rc
}
# a run that may legitimately fail (diverge): keep what it wrote
run_may_fail() {
    run "$@" || echo "   (exit status $?: the file holds the rows up to the failure)" >&2
}
has_system() { "$TSTEP" list | grep -q "^  $1 "; }
has_command() { "$TSTEP" --help | grep -q "^  $1 "; }
# a stepper that steps: registered and not a skeleton ("not implemented")
implemented() {
    ! "$TSTEP" run --system test1d --stepper "$1" --dt 0.1 --steps 1 --out /dev/null 2>&1 |
        grep -q 'not implemented\|unknown stepper'
}
# needs FIGURE STEPPER...: 0 when every stepper is implemented, else a note
needs() {
    fig=$1
    shift
    for s in "$@"; do
        implemented "$s" && continue
        if has_stepper "$s"; then why="not implemented yet"; else why="not in this build"; fi
        echo "   (figure $fig skipped: it needs $s, $why)" >&2
        return 1
    done
}
has_stepper() { "$TSTEP" list | grep -q "^  $1 "; }
steppers=
skeletons=
for s in $("$TSTEP" list | awk '/^Steppers:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'); do
    if implemented "$s"; then steppers="$steppers $s"; else skeletons="$skeletons $s"; fi
done
steppers=$(echo $steppers)
# each stepper's family, for the figures drawn as small multiples: 1 explicit
# Runge-Kutta, 2 implicit one-step, 3 symplectic, partitioned or multistep;
# from the flags `tstep list --format json` reports (a student's too)
"$TSTEP" list --format json | awk '
    /^  "steppers": \[/ { on = 1; next }
    on && /^  \]/ { on = 0 }
    !on { next }
    /"name":/ { gsub(/[",]/, "", $2); name = $2 }
    /"kind":/ { gsub(/[",]/, "", $2); kind = $2 }
    /"symplectic":/ { sym = ($2 ~ /true/) }
    /"partitioned":/ { part = ($2 ~ /true/) }
    /"multistep":/ { multi = ($2 ~ /true/) }
    /"summary":/ { print name, (sym || part || multi) ? 3 : (kind == "implicit" ? 2 : 1) }' \
    >"$data/families.dat"
[ -z "$skeletons" ] || echo "tools/plots.sh: not implemented yet, left out of the figures:$skeletons" >&2
# any gnuplot warning fails the figure (and make plots, make demo)
gperr=$(mktemp)
trap 'rm -f "$gperr"' EXIT
render() { # render SCRIPT [FORMATS] [gnuplot assignments]
    script=$1 formats=$2
    shift 2
    for fmt in $formats; do
        "$GNUPLOT" -e "datadir='$data'; outdir='$out'; fmt='$fmt'; steppers='$steppers'; $*" \
            -e "set loadpath '$here/plots'" "$here/plots/$script.gp" 2>"$gperr" ||
            { cat "$gperr" >&2; echo "tools/plots.sh: gnuplot failed on plots/$script.gp ($fmt)" >&2; exit 1; }
        if grep -qi 'warning' "$gperr"; then
            cat "$gperr" >&2
            echo "tools/plots.sh: gnuplot warned on plots/$script.gp ($fmt): fix the script or its data" >&2
            exit 1
        fi
        cat "$gperr" >&2
    done
}

if [ $quick = 1 ]; then levels=4; else levels=7; fi

section "convergence: error against dt, observed orders (tstep sweep)"
for sys in test1d oscillator; do
    run "$TSTEP" sweep --system $sys --stepper all --dt-min 1e-3 --dt-max 1e-1 \
        --levels $levels --t-end 1 --out "$data/sweep-$sys.dat"
done
sweep_systems="test1d oscillator"
# the string has no exact solution: against a reference computed with rk4
string_ref=0
if has_system string && needs "convergence (string)" rk4; then string_ref=1; fi
if [ $string_ref = 1 ]; then
    sweep_systems="test1d oscillator string"
    run "$TSTEP" sweep --system string --stepper all --levels $levels \
        --out "$data/sweep-string.dat"
fi

if [ $quick = 1 ]; then grid=0.1; else grid=0.04; fi
section "stability: dt_crit measured and predicted, amplification, regions"
run "$TSTEP" stability --system test1d --param k=10 --stepper all \
    --out "$data/stability-test1d.dat"
# the critically damped oscillator (lambda = -10 twice): the equation the
# amplification curves of the partitioned steppers are drawn on (zeta = 1)
run "$TSTEP" stability --system oscillator --param k=100 --param c=20 --stepper all \
    --out "$data/stability-damped.dat"
if has_system string; then # a spring system: measured against predicted
    run "$TSTEP" stability --system string --stepper all --out "$data/stability-string.dat"
fi
run "$TSTEP" amplification --stepper all --z-max 4 --out "$data/amplification.dat"
# the complex plane at twice the oscillator plane's spacing: its contours
# need no more, and each point of a stepper that carries state (BDF2) is a
# short run of implicit steps (a quarter of the demo's time at 0.04)
run "$TSTEP" region --stepper all --re-min -5 --re-max 3 --im-min -4 --im-max 4 \
    --step $(awk "BEGIN { print 2 * $grid }") --out "$data/region.dat"
run "$TSTEP" region --stepper all --plane oscillator --hw-max 4 --step $grid \
    --out "$data/region-oscillator.dat"

if has_command phase; then
    section "phase and amplitude per step on the oscillator (tstep phase)"
    run "$TSTEP" phase --stepper all --wh-max 3 --out "$data/phase.dat"
fi

section "error against time (tstep run --error): exact solution and computed reference"
err_systems=oscillator
for s in $steppers; do
    run_may_fail "$TSTEP" run --system oscillator --stepper $s --dt 0.1 --t-end 20 \
        --out /dev/null --error "$data/error-oscillator-$s.dat"
done
if [ $string_ref = 1 ]; then
    err_systems="oscillator string"
    for s in $steppers; do
        run_may_fail "$TSTEP" run --system string --stepper $s --dt 2e-4 --t-end 1 --every 10 \
            --out /dev/null --error "$data/error-string-$s.dat"
    done
fi

section "energy against time (tstep run --diagnostics)"
energy_systems=oscillator
for s in $steppers; do
    run_may_fail "$TSTEP" run --system oscillator --stepper $s --dt 0.1 --t-end 20 \
        --out /dev/null --diagnostics "$data/energy-oscillator-$s.csv"
done

# string, hair and cloth (the spring systems): energy, snapshots, animations
if has_system string; then
    energy_systems="oscillator string"
    for s in $steppers; do
        run_may_fail "$TSTEP" run --system string --stepper $s --dt 1e-3 --t-end 2 \
            --param damping=0 --param drag=0 --every 10 \
            --out /dev/null --diagnostics "$data/energy-string-$s.csv"
    done
    section "string, hair and cloth: frames for snapshots and animations (tstep run --format frames)"
    draw_string=0
    if needs string rk4; then
        draw_string=1
        run "$TSTEP" run --system string --stepper rk4 --dt 0.001 --t-end 2 --every 20 \
            --format frames --out "$data/frames-string.dat"
    fi
fi
if [ $quick = 1 ]; then t_anim=0.6; else t_anim=3; fi
draw_hair=0 draw_cloth=0
if has_system hair && needs hair backward-euler; then
    draw_hair=1
    run "$TSTEP" run --system hair --stepper backward-euler --dt 0.001 --t-end $t_anim \
        --param curl=5 --param n=40 --param curl_radius=0.008 --every 20 \
        --format frames --out "$data/frames-hair.dat"
fi
if has_system cloth && needs cloth backward-euler; then
    draw_cloth=1
    if [ $quick = 1 ]; then grid="--param nx=10 --param ny=10"; else grid=""; fi
    run "$TSTEP" run --system cloth --stepper backward-euler --adaptive --dt 0.01 --t-end $t_anim \
        --param plane=xz --param sphere_r=0.3 $grid --every 5 \
        --format frames --out "$data/frames-cloth.dat" \
        --diagnostics "$data/diagnostics-cloth.csv"
fi

section "methods: long-time energy, error control, Crank-Nicolson ringing"
# |E - E0| over 10^5 steps: symplectic steppers bounded, rk4 drifting
if [ $quick = 1 ]; then long=10000; else long=100000; fi
long_systems=oscillator
draw_long=0
needs longenergy symplectic-euler verlet implicit-midpoint rk4 && draw_long=1
for s in symplectic-euler verlet implicit-midpoint rk4; do
    [ $draw_long = 1 ] || break
    run "$TSTEP" run --system oscillator --stepper $s --dt 0.1 --steps $long \
        --every $((long / 1000)) --out /dev/null \
        --diagnostics "$data/longenergy-oscillator-$s.csv"
done
if has_system string; then
    long_systems="oscillator string"
    if [ $quick = 1 ]; then t_long=2; else t_long=20; fi
    for s in symplectic-euler verlet implicit-midpoint rk4; do
        [ $draw_long = 1 ] || break
        run "$TSTEP" run --system string --stepper $s --dt 1e-3 --t-end $t_long \
            --param damping=0 --param drag=0 --every 20 --out /dev/null \
            --diagnostics "$data/longenergy-string-$s.csv"
    done
fi
# dopri5 under error control on the oscillator to t = 1 (the sweep's t_end):
# tolerance, force evaluations, error against cos t, accepted, rejected
if [ $quick = 1 ]; then tols="1e-4 1e-7 1e-10"; else tols="1e-3 1e-4 1e-5 1e-6 1e-7 1e-8 1e-9 1e-10 1e-11 1e-12"; fi
echo "# tol force_evals error accepted rejected (dopri5, oscillator, t = 1)" \
    >"$data/tolerance-dopri5.dat"
draw_tolerance=0
needs tolerance dopri5 && draw_tolerance=1
for tol in $tols; do
    [ $draw_tolerance = 1 ] || break
    run "$TSTEP" run --system oscillator --stepper dopri5 --dt 1 --steps 1 --rtol $tol \
        --out "$data/tolerance-run.dat" --diagnostics "$data/tolerance-diag.dat"
    tail -1 "$data/tolerance-run.dat" >"$data/tolerance-last.dat"
    awk -v tol=$tol 'NR == FNR { x = $2; v = $3; next }
        /^#/ { for (i = 2; i <= NF; i++) col[$i] = i - 1; next }
        { last = $0 }
        END { split(last, f, " "); e = x - cos(1); e = e < 0 ? -e : e
              d = v + sin(1); d = d < 0 ? -d : d; if (d > e) e = d
              print tol, f[col["force_evals"]], e, f[col["accepted"]], f[col["rejected"]] }' \
        "$data/tolerance-last.dat" "$data/tolerance-diag.dat" >>"$data/tolerance-dopri5.dat"
done
rm -f "$data/tolerance-run.dat" "$data/tolerance-diag.dat" "$data/tolerance-last.dat"
# a stiff mode: Crank-Nicolson (R -> -1) rings, backward Euler (R -> 0) damps
draw_ringing=0
needs ringing crank-nicolson backward-euler && draw_ringing=1
for s in crank-nicolson backward-euler; do
    [ $draw_ringing = 1 ] || break
    run "$TSTEP" run --system test1d --param k=1000 --stepper $s --dt 0.01 --t-end 0.2 \
        --format csv --out "$data/ringing-test1d-$s.csv"
done
ringing_cloth=0
if has_system cloth && [ $draw_ringing = 1 ]; then
    ringing_cloth=1
    for s in crank-nicolson backward-euler; do
        run "$TSTEP" run --system cloth --param nx=8 --param ny=8 --param drag=0 \
            --param k_struct=100000 --stepper $s --dt 0.02 --t-end 1 \
            --format csv --out "$data/ringing-cloth-$s.csv"
    done
fi

section "rendering"
render convergence "png svg" "systems='$sweep_systems'"
render workprecision "png svg"
render stability "png svg"
render regions "png svg"
render oscregions "png svg"
render energy "png svg" "energy_systems='$energy_systems'"
[ $draw_long = 0 ] || render longenergy "png svg" "long_systems='$long_systems'"
[ $draw_tolerance = 0 ] || render tolerance "png svg"
[ $draw_ringing = 0 ] || render ringing "png svg" "ringing_cloth=$ringing_cloth"
if has_command phase; then render phase "png svg"; fi
render errortime "png svg" "errsystems='$err_systems'"
if has_system string && [ $draw_string = 1 ]; then render string "png svg"; fi
if [ $draw_hair = 1 ]; then render hair "png svg gif"; fi
if [ $draw_cloth = 1 ]; then render cloth "png svg gif"; fi

section "figures in $out/ (each .png also as .svg; data in $data/)"
for f in "$out"/*.png "$out"/*.gif; do
    [ -f "$f" ] && echo "  $f" >&2
done
for sys in string hair cloth; do
    has_system $sys || echo "  (no '$sys' system in this build: its figures are skipped)" >&2
done
# every figure under 2 MB (a figure that large is drawn wrong: a polygon per
# grid cell, a frame per step)
for f in "$out"/*.png "$out"/*.svg "$out"/*.gif; do
    [ -f "$f" ] || continue
    size=$(wc -c <"$f")
    if [ "$size" -gt 2000000 ]; then
        echo "tools/plots.sh: $f is $size bytes, more than 2 MB" >&2
        exit 1
    fi
done
exit 0
