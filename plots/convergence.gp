# plots/convergence.gp - error against step size, log-log, a line per stepper.
#
# Reads DATADIR/sweep-SYSTEM.dat for each SYSTEM in `systems` (default
# "test1d oscillator"), one panel each, made by
#   build/tstep sweep --system test1d --stepper all --dt-min 1e-3 --dt-max 1e-1 \
#       --levels 7 --t-end 1 --out build/plots/data/sweep-test1d.dat
# (the same with --system oscillator).  Columns used: 1 stepper, 2 dt,
# 4 error, 5 excluded ('-' when the point is in the fit), 6 observed_order;
# one index block per stepper.
# Draws: the fitted points as lines, excluded ones (round-off, unstable) as
# open circles, reference slopes 1, 2 and 4, the observed orders in the key.
# Steppers whose points coincide (midpoint and trapezoid on linear systems)
# stay visible: earlier lines are drawn wider, each with its own marker.
# Writes OUTDIR/convergence.png (or .svg); see plots/style.gp.
if (!exists("systems")) systems = 'test1d oscillator'
call 'style.gp' 'convergence' (820 * words(systems)) 520

set multiplot layout 1, words(systems)
set logscale xy
set format x '10^{%L}'
set format y '10^{%L}'
set xlabel 'step size dt'
set ylabel 'max-norm error at t_{end}'
set key outside right top vertical Left reverse width -6 font ',10'
array name[64]
array order[64]
array fitted[64]  # points in the fit per stepper: one without any is keyed, not drawn
do for [sys in systems] {
    file = datadir.'/sweep-'.sys.'.dat'
    set xrange [*:*]  # stats below honours the ranges of the previous panel
    set yrange [*:*]
    stats file using 2:4 nooutput
    n = STATS_blocks
    dtmin = STATS_min_x
    dtmax = STATS_max_x
    emin = STATS_min_y > 0 ? STATS_min_y : 1e-16
    emax = STATS_max_y
    excluded = 0
    do for [i = 0:n-1] {
        fitted[i+1] = 0
        stats file index i using (name[i+1] = strcol(1), \
            order[i+1] = strcol(6) eq 'nan' ? NaN : real(strcol(6)), \
            fitted[i+1] = fitted[i+1] + (strcol(5) eq '-' && $4 > 0), \
            excluded = excluded + (strcol(5) ne '-'), 0) nooutput
    }
    # the smallest error at the largest dt anchors the reference fan
    # (one column: with a single point, a two-column stats warns about its fit)
    stats file using ($2 >= dtmax * 0.999 ? $4 : NaN) nooutput
    anchor = STATS_min / 20
    set yrange [emin / 10 : emax * 10]
    set xrange [dtmin / 1.4 : dtmax * 1.4]
    set title sprintf('%s: error against step size', sys)
    ref(x, p) = anchor * (x / dtmax)**p
    cmd = 'plot'
    do for [i = 1:n] {
        style = sprintf("with linespoints lw %g dt %d pt %d ps 1.1 lc rgb '%s'", \
            stepper_lw(i, n), stepper_dash(name[i], i), stepper_point(name[i], i), \
            stepper_color(name[i], i))
        if (fitted[i] > 0) {
            cmd = cmd.sprintf(" file index %d using 2:(strcol(5) eq '-' ? $4 : NaN) %s " . \
                "title sprintf('%%s  (observed %%.2f)', name[%d], order[%d]),", i - 1, style, i, i)
        } else {
            cmd = cmd.sprintf(" NaN %s title '%s  (no point in the fit)',", style, name[i])
        }
    }
    if (excluded > 0) {
        cmd = cmd." file using 2:(strcol(5) ne '-' ? $4 : NaN):(stepper_rgb(strcol(1), " . \
            "column(-2) + 1)) with points pt 6 ps 1.3 lc rgb variable notitle,"
    }
    eval cmd." ref(x, 1) with lines dt 2 lw 1.5 lc rgb '#606060' title 'slope 1'," . \
        " ref(x, 2) with lines dt 3 lw 1.5 lc rgb '#606060' title 'slope 2'," . \
        " ref(x, 4) with lines dt 4 lw 1.5 lc rgb '#606060' title 'slope 4'," . \
        " NaN with points pt 6 ps 1.3 lc rgb '#606060' title 'excluded from fit'"
}
unset multiplot
