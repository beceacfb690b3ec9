# plots/stability.gp - one-step amplification against hk, and the stability
# regions' boundaries in the complex plane, with the measured dt_crit.
#
# Reads, from DATADIR:
#   amplification.dat   build/tstep amplification --stepper all --z-max 4 \
#                           --out build/plots/data/amplification.dat
#                       columns 1 stepper, 2 z = hk, 5 |R|; a block per stepper
#   stability-damped.dat  build/tstep stability --system oscillator --param k=100 \
#                           --param c=20 --stepper all \
#                           --out build/plots/data/stability-damped.dat
#                       columns 1 stepper, 2 dt_crit, 7 lambda_re, 8 lambda_im:
#                       the critically damped oscillator (lambda = -10 twice), the
#                       equation every curve is drawn on: x' = -k x for a stepper
#                       judged on the scalar equation, x'' = -w^2 x - 2 w x' (zeta = 1)
#                       for a partitioned one (symplectic Euler, Verlet), whose
#                       markers then sit on their own curves (0.828 and 0.472)
#   region.dat          build/tstep region --stepper all --re-min -5 --re-max 3 \
#                           --im-min -4 --im-max 4 --out build/plots/data/region.dat
#                       columns 2 Re z, 3 Im z, 4 |R|; a grid block per stepper
# Left: |R(hk)| of one step on x' = -k x, the line |R| = 1, and at each
# stepper's measured dt_crit (critically damped oscillator, |lambda| = 10) a
# mark at hk = dt_crit |lambda|:
# the marks sit where the curves cross |R| = 1.  Right: the boundary |R| = 1
# of each stepper's stability region in z = h lambda, and the measured
# -dt_crit |lambda| on the negative real axis.
# Writes OUTDIR/stability.png (or .svg); see plots/style.gp.
call 'style.gp' 'stability' 1500 820

amp = datadir.'/amplification.dat'
crit = datadir.'/stability-damped.dat'
reg = datadir.'/region.dat'
stats amp using 2 nooutput
n = STATS_blocks
zmax = STATS_max
array name[n]
array hkc[n]    # measured dt_crit |lambda|, NaN when inf
array dtc[n]
do for [i = 1:n] {
    stats amp index (i-1) using (name[i] = strcol(1), 0) nooutput
    hkc[i] = NaN
    dtc[i] = NaN
}
# the stability table, matched by name (its order may differ)
stats crit using (lam = sqrt(column(7)**2 + column(8)**2), 0) nooutput
do for [i = 1:n] {
    stats crit using (strcol(1) eq name[i] ? (dtc[i] = column(2), \
        hkc[i] = (column(2) < 1e300 ? column(2) * lam : NaN)) : 0, 0) nooutput
}
key(i) = dtc[i] == dtc[i] ? \
    (dtc[i] > 1e300 ? sprintf('%s: dt_{crit} = inf', name[i]) : \
     sprintf('%s: dt_{crit} = %.4g (h|{/Symbol l}| = %.3f)', name[i], dtc[i], hkc[i])) : \
    name[i]

set multiplot layout 1, 2 title sprintf('Stability: measured by running each stepper (critically damped oscillator, {/Symbol l} = -%g twice)', lam)

# --- left: amplification ----------------------------------------------------
set title "growth per step on x' = -k x (symplectic Euler, Verlet: x'' = -k x - 2{/Symbol \326}k x';\nVerlet, BDF2: the map a run iterates)"
set xlabel 'hk'
set ylabel '|R(-hk)| = |x_1 / x_0|'
set xrange [0:zmax]
set yrange [0:2.5]
set x2range [0:zmax / lam]
set x2tics
set xtics nomirror
set x2label sprintf('dt for |{/Symbol l}| = %g', lam)
# the key below the panel, outside the data
set key outside below center Left reverse font ',9' maxcols 2 width -2
set arrow 1 from 0, 1 to zmax, 1 nohead lw 1.5 lc rgb '#202020' dt 2 front
set label 1 '|R| = 1' at zmax * 0.98, 1.07 right front
plot for [i = 1:n] amp index (i-1) using 2:5 with lines lw stepper_lw(i, n) \
        dt stepper_dash(name[i], i) lc rgb stepper_color(name[i], i) title key(i), \
     for [i = 1:n] '+' using (hkc[i]):(1) every ::0::0 with points pt (2 * i + 3) ps 2 lw 2 \
        lc rgb stepper_color(name[i], i) notitle, \
     for [i = 1:n] '+' using (hkc[i]):(0):(0):(2.5) every ::0::0 with vectors nohead dt 3 \
        lc rgb stepper_color(name[i], i) notitle
unset arrow 1
unset label 1
unset x2tics
unset x2label
set xtics mirror

# --- right: region boundaries ------------------------------------------------
set title 'stability regions: boundary |R(z)| = 1, z = h{/Symbol l}'
set xlabel 'Re z'
set ylabel 'Im z'
set xrange [*:*]  # the left panel's ranges would clip the contouring
set yrange [*:*]
set contour base
set cntrparam levels discrete 1
unset surface
set view map
# one datablock $cI per stepper (a single table's blocks are not reliably
# numbered: its comment lines sit between blank lines)
# a stepper whose step fails on most of the plane (one that refuses the
# complex test equation) has no boundary to draw: left out, as in regions.gp
array partial[n]
do for [i = 1:n] {
    stats reg index (i-1) using 4 nooutput
    partial[i] = STATS_records < STATS_invalid
    if (!partial[i]) {
        eval sprintf('set table $c%d', i)
        splot reg index (i-1) using 2:3:4
        unset table
    }
}
unset contour
set size ratio -1
stats reg using 2:3 nooutput
set xrange [STATS_min_x:STATS_max_x]
set yrange [STATS_min_y:STATS_max_y]
set xzeroaxis lt 1 lc rgb '#808080'
set yzeroaxis lt 1 lc rgb '#808080'
set key outside right top vertical Left reverse font ',10' width -2 maxcols auto maxrows auto
cmd = 'plot'
do for [i = 1:n] {
    if (!partial[i]) {
        cmd = cmd.sprintf(" $c%d using 1:2 with lines lw %g dt %d lc rgb '%s' title '%s',", \
                          i, stepper_lw(i, n), stepper_dash(name[i], i), stepper_color(name[i], i), \
                          name[i])
    }
}
cmd = cmd." for [i = 1:n] '+' using (-hkc[i]):(0) every ::0::0 with points pt (2 * i + 3)"
cmd = cmd." ps 2 lw 2 lc rgb stepper_color(name[i], i) notitle"
eval cmd
unset multiplot
