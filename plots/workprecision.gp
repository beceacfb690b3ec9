# plots/workprecision.gp - work against precision: error against cost.
#
# Reads DATADIR/sweep-SYSTEM.dat for SYSTEM = `wpsystem` (default
# oscillator), made by
#   build/tstep sweep --system oscillator --stepper all --dt-min 1e-3 \
#       --dt-max 1e-1 --levels 7 --t-end 1 --out build/plots/data/sweep-oscillator.dat
# Columns used: 1 stepper, 4 error, 5 excluded ('-' when in the fit),
# 7 force_evals, 11 seconds (wall-clock time of the stepping); one index
# block per stepper.  Points excluded from the order fit (round-off,
# unstable) are left out.
# Draws two panels, error against force evaluations and error against wall
# time, a line per stepper: lower and further left is cheaper for the same
# accuracy.  Writes OUTDIR/workprecision.png (or .svg); see plots/style.gp.
if (!exists("wpsystem")) wpsystem = 'oscillator'
call 'style.gp' 'workprecision' 1500 540

file = datadir.'/sweep-'.wpsystem.'.dat'
stats file using 2 nooutput
n = STATS_blocks
array name[64]
do for [i = 0:n-1] {
    stats file index i using (name[i+1] = strcol(1), 0) nooutput
}
set multiplot layout 1, 2 title sprintf('%s: work against precision (tstep sweep, t_{end} = 1)', wpsystem)
set logscale xy
set format y '10^{%L}'
set ylabel 'max-norm error at t_{end}'
set key outside right top vertical Left reverse width -4 font ',10'
ok(c) = strcol(5) eq '-' ? column(c) : NaN

set title 'error against force evaluations'
set xlabel 'force evaluations'
set format x '10^{%L}'
plot for [i = 1:n] file index (i-1) using (ok(7)):4 with linespoints lw stepper_lw(i, n) \
    dt stepper_dash(name[i], i) pt stepper_point(name[i], i) ps 1.1 lc rgb stepper_color(name[i], i) title name[i]

set title 'error against wall-clock time'
set xlabel 'seconds (mean of repeated runs for runs under 2 ms)'
plot for [i = 1:n] file index (i-1) using (ok(11)):4 with linespoints lw stepper_lw(i, n) \
    dt stepper_dash(name[i], i) pt stepper_point(name[i], i) ps 1.1 lc rgb stepper_color(name[i], i) title name[i]
unset multiplot
