# plots/tolerance.gp - dopri5 under error control beside the fixed-step methods.
#
# Reads DATADIR/sweep-oscillator.dat (fixed steps; made by
#   build/tstep sweep --system oscillator --stepper all --dt-min 1e-3 \
#       --dt-max 1e-1 --levels 7 --t-end 1 --out build/plots/data/sweep-oscillator.dat
# columns 1 stepper, 4 error, 5 excluded, 7 force_evals, one block per
# stepper) and DATADIR/tolerance-dopri5.dat (columns tol, force_evals,
# error, accepted, rejected; one line per tolerance, made by tools/plots.sh from
#   build/tstep run --system oscillator --stepper dopri5 --dt 1 --steps 1 --rtol TOL
# with the error against the exact solution cos t at t = 1).
# Left: error against force evaluations, a line per fixed-step stepper and
# dopri5 with its tolerances (lower left is cheaper for the same accuracy).
# Right: the error dopri5 reached against the tolerance asked for.
# Writes OUTDIR/tolerance.png (or .svg); see plots/style.gp.
call 'style.gp' 'tolerance' 1500 560
file = datadir.'/sweep-oscillator.dat'
tolf = datadir.'/tolerance-dopri5.dat'
stats file using 2 nooutput
n = STATS_blocks
array name[64]
do for [i = 0:n-1] {
    stats file index i using (name[i+1] = strcol(1), 0) nooutput
}
set multiplot layout 1, 2 title 'oscillator, t = 1: error control against fixed steps'
set logscale xy
set format y '10^{%L}'
set format x '10^{%L}'
set ylabel 'max-norm error at t = 1'
set key outside right top vertical Left reverse width -4 font ',9'
ok(c) = strcol(5) eq '-' ? column(c) : NaN
set title 'error against force evaluations'
set xlabel 'force evaluations'
plot for [i = 1:n] file index (i-1) using (ok(7)):4 with linespoints lw 1.2 pt 7 ps 0.5 \
        lc rgb stepper_color(name[i], i) title name[i], \
     tolf using 2:3 with linespoints lw 3 pt 5 ps 1.2 lc rgb '#000000' title 'dopri5 --rtol', \
     tolf using 2:3:(sprintf('%g', $1)) with labels offset 1.5, -0.8 font ',8' notitle
set title 'dopri5: error reached against tolerance'
set xlabel 'rtol = atol'
set key inside left top
plot tolf using 1:3 with linespoints lw 2 pt 5 lc rgb '#000000' title 'error at t = 1', \
     x with lines dt 2 lc rgb '#808080' title 'error = tolerance'
unset multiplot
