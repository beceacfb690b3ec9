# plots/longenergy.gp - long-time energy error |E - E0| against t, log scale.
#
# Reads DATADIR/longenergy-SYSTEM-STEPPER.csv for SYSTEM in `long_systems`
# (default "oscillator") and STEPPER in symplectic-euler, verlet,
# implicit-midpoint, rk4, made by (tools/plots.sh)
#   build/tstep run --system oscillator --stepper STEPPER --dt 0.1 --steps 100000 \
#       --every 100 --out /dev/null --diagnostics build/plots/data/longenergy-oscillator-STEPPER.csv
#   build/tstep run --system string --stepper STEPPER --dt 1e-3 --t-end 20 \
#       --param damping=0 --param drag=0 --every 20 --out /dev/null \
#       --diagnostics build/plots/data/longenergy-string-STEPPER.csv
# Columns used, by name: t, energy.  Both systems are undamped: the exact
# energy is constant.  The symplectic steppers' error oscillates but stays
# bounded (symplectic Euler O(h), Verlet O(h^2)); the implicit midpoint rule
# keeps the oscillator's quadratic energy to round-off (Newton's tolerance
# on the nonlinear string); rk4's error grows in proportion to t.
# Writes OUTDIR/longenergy.png (or .svg); see plots/style.gp.
if (!exists("long_systems")) long_systems = 'oscillator'
call 'style.gp' 'longenergy' (700 * words(long_systems)) 560
set datafile separator comma
names = 'symplectic-euler verlet implicit-midpoint rk4'
set multiplot layout 1, words(long_systems) title 'long-time energy error |E - E_0| (tstep run --diagnostics)'
set logscale y
set format y '10^{%L}'
set xlabel 't'
set ylabel '|E - E_0|  [J]'
set key outside below horizontal font ',10'
do for [sys in long_systems] {
    f(i) = datadir.'/longenergy-'.sys.'-'.word(names, i).'.csv'
    array e0[4]
    do for [i = 1:4] {
        stats f(i) every ::0::0 using 'energy' nooutput
        e0[i] = STATS_max
    }
    set title sprintf('%s, undamped', sys)
    d(i) = abs(column('energy') - e0[i])
    plot for [i = 1:4] f(i) using 't':(d(i) > 0 ? d(i) : NaN) with lines lw 1.5 \
        lc rgb stepper_color(word(names, i), i) title word(names, i)
}
unset multiplot
