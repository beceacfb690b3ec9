# plots/energy.gp - total energy against time, a line per stepper.
#
# Reads DATADIR/energy-SYSTEM-STEPPER.csv for each SYSTEM in
# `energy_systems` (default "oscillator") and STEPPER in `steppers`
# (default: the six built-in steppers), one panel per system, made by
#   build/tstep run --system oscillator --stepper STEPPER --dt 0.1 --t-end 20 \
#       --out /dev/null --diagnostics build/plots/data/energy-oscillator-STEPPER.csv
#   build/tstep run --system string --stepper STEPPER --dt 1e-3 --t-end 2 \
#       --param damping=0 --param drag=0 --every 10 \
#       --out /dev/null --diagnostics build/plots/data/energy-string-STEPPER.csv
# (tools/plots.sh; both systems undamped, so the exact energy is constant).
# Columns used, by name: t, energy.
# A panel shows energy / energy(0) on a log axis when energy(0) != 0 (steady
# growth or decay is a straight line), else the drift energy - energy(0) in
# joules.  A run that diverged (its file ends before the others) is drawn
# to where it stopped and named so in the key; the y range is set by the
# runs that finished.  Forward Euler gains, backward Euler loses, rk4 holds.
# Writes OUTDIR/energy.png (or .svg); see plots/style.gp.
if (!exists("energy_systems")) energy_systems = 'oscillator'
if (!exists("steppers")) \
    steppers = 'forward-euler midpoint trapezoid rk4 backward-euler backward-euler-linear'
call 'style.gp' 'energy' (700 * words(energy_systems)) 560

set datafile separator comma
ns = words(steppers)
array e0[ns]
array tend[ns]
set multiplot layout 1, words(energy_systems) title 'total energy against time (tstep run --diagnostics)'
set xlabel 't'
set key outside below horizontal maxcols 2 height 1.5 font ',10' Left reverse width -2
do for [sys in energy_systems] {
    f(i) = datadir.'/energy-'.sys.'-'.word(steppers, i).'.csv'
    set xrange [*:*]
    set yrange [*:*]
    unset logscale y
    do for [i = 1:ns] {
        stats f(i) every ::0::0 using 'energy' nooutput
        e0[i] = STATS_max
        stats f(i) using 't' nooutput
        tend[i] = STATS_max
    }
    T = 0
    do for [i = 1:ns] { T = tend[i] > T ? tend[i] : T }
    finished(i) = tend[i] >= 0.999 * T
    ratio = abs(e0[1]) > 0
    # y range from the runs that finished
    lo = 1e300; hi = -1e300
    do for [i = 1:ns] {
        if (finished(i)) {
            stats f(i) using (ratio ? column('energy') / e0[i] : column('energy') - e0[i]) nooutput
            lo = STATS_min < lo ? STATS_min : lo
            hi = STATS_max > hi ? STATS_max : hi
        }
    }
    set xrange [0:T]
    if (ratio) {
        set logscale y
        set yrange [lo / 1.3 : hi * 1.3]
        set ytics (0.0625, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16) format '%g'
        set ylabel 'energy / energy at t = 0'
        set title sprintf('%s: energy relative to t = 0', sys)
    } else {
        set ytics auto format '% h'
        span = hi - lo > 0 ? hi - lo : 1
        set yrange [lo - 0.15 * span : hi + 0.15 * span]
        set ylabel 'energy - energy at t = 0  [J]'
        set title sprintf('%s: energy drift (energy at t = 0 is 0)', sys)
    }
    y(i) = ratio ? column('energy') / e0[i] : column('energy') - e0[i]
    label(i) = finished(i) ? word(steppers, i) : \
        sprintf('%s (diverged at t = %.3g)', word(steppers, i), tend[i])
    plot for [i = 1:ns] f(i) using 't':(y(i)) with lines lw stepper_lw(i, ns) \
            dt stepper_dash(word(steppers, i), i) lc rgb stepper_color(word(steppers, i), i) title label(i), \
         (ratio ? 1 : 0) with lines dt 2 lc rgb '#606060' notitle
}
unset multiplot
