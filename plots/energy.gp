# plots/energy.gp - total energy against time, a line per stepper.
#
# Reads DATADIR/energy-SYSTEM-STEPPER.csv for each SYSTEM in
# `energy_systems` (default "oscillator") and STEPPER in `steppers`
# (default: the six built-in steppers), one panel per system, made by
#   build/tstep run --system oscillator --stepper STEPPER --dt 0.1 --t-end 20 \
#       --out /dev/null --diagnostics build/plots/data/energy-oscillator-STEPPER.csv
# (tools/plots.sh gives each system its own dt and t_end).  Columns used,
# by name: t, energy.
# Draws energy / energy(0) on a log axis, so steady growth or decay is a
# straight line: forward Euler gains, backward Euler loses, rk4 holds.
# Writes OUTDIR/energy.png (or .svg); see plots/style.gp.
if (!exists("energy_systems")) energy_systems = 'oscillator'
if (!exists("steppers")) \
    steppers = 'forward-euler midpoint trapezoid rk4 backward-euler backward-euler-linear'
call 'style.gp' 'energy' (760 * words(energy_systems)) 520

set datafile separator comma
set multiplot layout 1, words(energy_systems)
set logscale y
set xlabel 't'
set ylabel 'energy / energy at t = 0'
set key outside below horizontal maxrows 2 font ',10'
set grid ytics mytics
do for [sys in energy_systems] {
    set title sprintf('%s: total energy against time', sys)
    f(s) = datadir.'/energy-'.sys.'-'.s.'.csv'
    e0 = 1
    array e0s[words(steppers)]
    do for [i = 1:words(steppers)] {
        stats f(word(steppers, i)) every ::0::0 using 'energy' nooutput
        e0s[i] = STATS_max != 0 ? STATS_max : 1
    }
    plot for [i = 1:words(steppers)] f(word(steppers, i)) using 't':(column('energy') / e0s[i]) \
        with lines lw (4.5 - 0.5 * i) lc rgb stepper_color(word(steppers, i), i) \
        title word(steppers, i), \
        1 with lines dt 2 lc rgb '#606060' notitle
}
unset multiplot
