# plots/phase.gp - amplitude and phase of one step on the undamped
# oscillator, against w h, a line per stepper.
#
# Reads DATADIR/phase.dat, made by
#   build/tstep phase --stepper all --wh-max 3 --out build/plots/data/phase.dat
# columns 1 stepper, 2 wh, 3 |mu| (|R(i w h)|), 4 arg mu (radians); one
# index block per stepper.
# Left: the amplitude factor per step |mu| (exact 1: above it the
# oscillation grows, below it decays).  Right: the phase per step relative
# to the exact one, arg mu / (w h) (exact 1: below it the numerical
# oscillation lags, its period is too long).  Midpoint and trapezoid
# coincide (the same R on a linear system), as do the backward Euler
# variants: earlier lines are drawn wider.
# Writes OUTDIR/phase.png (or .svg); see plots/style.gp.
call 'style.gp' 'phase' 1500 600

file = datadir.'/phase.dat'
stats file using 2 nooutput
n = STATS_blocks
whmax = STATS_max
array name[n]
do for [i = 1:n] {
    stats file index (i-1) using (name[i] = strcol(1), 0) nooutput
}
set multiplot layout 1, 2 title "one step on the undamped oscillator x'' = -{/Symbol w}^2 x, measured by running each stepper"
set xrange [0:whmax]
set xlabel '{/Symbol w}h'
set key top left Left reverse font ',10'

set title 'amplitude per step'
set ylabel '|{/Symbol m}| = |R(i{/Symbol w}h)|'
set yrange [0:2]
plot for [i = 1:n] file index (i-1) using 2:3 with lines lw (4.5 - 0.5 * i) \
         lc rgb stepper_color(name[i], i) title name[i], \
     1 with lines dt 2 lw 1.5 lc rgb '#202020' title 'exact'

set title 'phase per step, relative to the exact {/Symbol w}h'
set ylabel 'arg {/Symbol m} / {/Symbol w}h'
set yrange [0:1.5]
set key bottom left
plot for [i = 1:n] file index (i-1) using 2:($4 / $2) with lines lw (4.5 - 0.5 * i) \
         lc rgb stepper_color(name[i], i) title name[i], \
     1 with lines dt 2 lw 1.5 lc rgb '#202020' title 'exact'
unset multiplot
