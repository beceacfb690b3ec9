# plots/phase.gp - amplitude and phase of one step on the undamped
# oscillator, against w h, in small multiples: a column per family of
# steppers, amplitude above, phase below, a line per stepper.
#
# Reads DATADIR/phase.dat, made by
#   build/tstep phase --stepper all --wh-max 3 --out build/plots/data/phase.dat
# columns 1 stepper, 2 wh, 3 |mu| (|R(i w h)|), 4 arg mu (radians); one
# index block per stepper; and DATADIR/families.dat (tools/plots.sh, from
# `tstep list --format json`): lines "NAME F", F = 1 explicit Runge-Kutta,
# 2 implicit one-step, 3 symplectic, partitioned or multistep (a stepper
# missing there goes to the first column).
# Top: the amplitude factor per step |mu| (exact 1: above it the
# oscillation grows, below it decays).  Bottom: the phase per step relative
# to the exact one, arg mu / (w h) (exact 1: below it the numerical
# oscillation lags, its period is too long).  Midpoint and trapezoid
# coincide (the same R on a linear system), as do the backward Euler
# variants: earlier lines are drawn wider, and dashed differently.  Each
# column's key sits above its panel, outside the data.
# Writes OUTDIR/phase.png (or .svg); see plots/style.gp.
call 'style.gp' 'phase' 1500 1050

file = datadir.'/phase.dat'
famfile = datadir.'/families.dat'
stats file using 2 nooutput
n = STATS_blocks
whmax = STATS_max
array name[n]
array fam[n]
array rank[n]  # position within its family (line width and dash)
array count[3]
do for [f = 1:3] { count[f] = 0 }
do for [i = 1:n] {
    stats file index (i-1) using (name[i] = strcol(1), 0) nooutput
    fam[i] = 1
    stats famfile using (strcol(1) eq name[i] ? (fam[i] = int(column(2)), 0) : 0) nooutput
    count[fam[i]] = count[fam[i]] + 1
    rank[i] = count[fam[i]]
}
array famtitle[3] = ['explicit Runge-Kutta', 'implicit one-step', \
                     'symplectic, partitioned, multistep']
lw(i) = stepper_lw(rank[i], count[fam[i]])

set multiplot layout 2, 3 title "one step on the undamped oscillator x'' = -{/Symbol w}^2 x, measured by running each stepper\n(top: amplitude per step |{/Symbol m}| = |R(i{/Symbol w}h)|; bottom: phase per step relative to the exact {/Symbol w}h)"
set xrange [0:whmax]
set xlabel '{/Symbol w}h'
set key outside top center horizontal maxcols 3 Left reverse font ',10' width -3
set tmargin 7  # the keys' room above the top row: its panels the same height
do for [f = 1:3] {
    set key title famtitle[f] font ',11'
    set ylabel '|{/Symbol m}|'
    set yrange [0:2]
    plot for [i = 1:n] file index (i-1) using 2:(fam[i] == f ? $3 : NaN) with lines lw lw(i) \
             dt stepper_dash(name[i], rank[i]) lc rgb stepper_color(name[i], i) \
             title (fam[i] == f ? name[i] : ''), \
         1 with lines dt 2 lw 1.5 lc rgb '#202020' title 'exact'
}
unset key
set tmargin 1.5
do for [f = 1:3] {
    set ylabel 'arg {/Symbol m} / {/Symbol w}h'
    set yrange [0:1.5]
    plot for [i = 1:n] file index (i-1) using 2:(fam[i] == f ? $4 / $2 : NaN) with lines \
             lw lw(i) dt stepper_dash(name[i], rank[i]) lc rgb stepper_color(name[i], i) notitle, \
         1 with lines dt 2 lw 1.5 lc rgb '#202020' notitle
}
unset multiplot
