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
#   families.dat        tools/plots.sh, from `tstep list --format json`: lines
#                       "NAME F", F = 1 explicit Runge-Kutta, 2 implicit
#                       one-step, 3 symplectic, partitioned or multistep (a
#                       stepper missing there goes to the first column)
# Small multiples, a column per family.  Top: |R(hk)| of one step on
# x' = -k x, the line |R| = 1, and at each stepper's measured dt_crit
# (critically damped oscillator, |lambda| = 10) a mark at hk = dt_crit
# |lambda|: the marks sit where the curves cross |R| = 1; the key, above
# the panel, gives dt_crit.  Bottom: the boundary |R| = 1 of each stepper's
# stability region in z = h lambda, and the measured -dt_crit |lambda| on
# the negative real axis.
# Writes OUTDIR/stability.png (or .svg); see plots/style.gp.
call 'style.gp' 'stability' 1500 1250

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
famfile = datadir.'/families.dat'
array fam[n]
array rank[n]  # position within its family (line width and dash)
array count[3]
do for [f = 1:3] { count[f] = 0 }
do for [i = 1:n] {
    fam[i] = 1
    stats famfile using (strcol(1) eq name[i] ? (fam[i] = int(column(2)), 0) : 0) nooutput
    count[fam[i]] = count[fam[i]] + 1
    rank[i] = count[fam[i]]
}
array famtitle[3] = ['explicit Runge-Kutta', 'implicit one-step', \
                     'symplectic, partitioned, multistep']
lw(i) = stepper_lw(rank[i], count[fam[i]])

# the region boundaries, contoured once per stepper into $cI (a single
# table's blocks are not reliably numbered: its comment lines sit between
# blank lines); a stepper whose step fails on most of the plane (one that
# refuses the complex test equation) has no boundary: left out, as in regions.gp
set contour base
set cntrparam levels discrete 1
unset surface
set view map
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
set surface
stats reg using 2:3 nooutput
remin = STATS_min_x; remax = STATS_max_x; immin = STATS_min_y; immax = STATS_max_y

set multiplot layout 2, 3 title sprintf("Stability, measured by running each stepper; marks: dt_{crit} on the critically damped oscillator, {/Symbol l} = -%g twice\ntop: growth per step on x' = -k x (symplectic Euler, Verlet: x'' = -k x - 2{/Symbol \326}k x'; Verlet, BDF2: the map a run iterates)\nbottom: the stability regions' boundaries |R(z)| = 1, z = h{/Symbol l}\n", lam)

# --- top: amplification, a panel per family --------------------------------------
set xlabel 'hk'
set ylabel '|R(-hk)| = |x_1 / x_0|'
set xrange [0:zmax]
set yrange [0:2.5]
set x2range [0:zmax / lam]
set x2tics
set xtics nomirror
set x2label sprintf('dt for |{/Symbol l}| = %g', lam)
set tmargin 13 # the keys' room above the panels: the top row's panels the same height
set key outside top center vertical Left reverse font ',9' width -2 maxcols 1
set arrow 1 from 0, 1 to zmax, 1 nohead lw 1.5 lc rgb '#202020' dt 2 front
do for [f = 1:3] {
    set key title famtitle[f] font ',11'
    plot for [i = 1:n] amp index (i-1) using 2:(fam[i] == f ? $5 : NaN) with lines lw lw(i) \
            dt stepper_dash(name[i], rank[i]) lc rgb stepper_color(name[i], i) \
            title (fam[i] == f ? key(i) : ''), \
         for [i = 1:n] '+' using (fam[i] == f ? hkc[i] : NaN):(1) every ::0::0 with points \
            pt (2 * i + 3) ps 2 lw 2 lc rgb stepper_color(name[i], i) notitle, \
         for [i = 1:n] '+' using (fam[i] == f ? hkc[i] : NaN):(0):(0):(2.5) every ::0::0 \
            with vectors nohead dt 3 lc rgb stepper_color(name[i], i) notitle
}
unset arrow 1
unset x2tics
unset x2label
set xtics mirror
unset key
set tmargin 1.5

# --- bottom: region boundaries, a panel per family ---------------------------------
set xlabel 'Re z'
set ylabel 'Im z'
set size ratio -1
set xrange [remin:remax]
set yrange [immin:immax]
set xzeroaxis lt 1 lc rgb '#808080'
set yzeroaxis lt 1 lc rgb '#808080'
do for [f = 1:3] {
    cmd = "plot NaN notitle"
    do for [i = 1:n] {
        if (!partial[i] && fam[i] == f) {
            cmd = cmd.sprintf(", $c%d using 1:2 with lines lw %g dt %d lc rgb '%s' notitle", \
                              i, lw(i), stepper_dash(name[i], rank[i]), stepper_color(name[i], i))
        }
    }
    cmd = cmd." , for [i = 1:n] '+' using (fam[i] == f ? -hkc[i] : NaN):(0) every ::0::0"
    cmd = cmd." with points pt (2 * i + 3) ps 2 lw 2 lc rgb stepper_color(name[i], i) notitle"
    eval cmd
}
unset multiplot
