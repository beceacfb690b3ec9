# plots/regions.gp - each stepper's stability region, shaded, one panel each.
#
# Reads DATADIR/region.dat, made by
#   build/tstep region --stepper all --re-min -5 --re-max 3 --im-min -4 --im-max 4 \
#       --out build/plots/data/region.dat
# columns 1 stepper, 2 Re z, 3 Im z, 4 |R(z)|; one grid block per stepper.
# Each panel shades the set |R(z)| <= 1 (one step does not grow) in the
# stepper's colour and draws its boundary: inside the curves for the
# explicit steppers, outside the circle for backward Euler.  Where a
# stepper's step fails (|R| nan) the plane is left white; a stepper that
# fails on most of it (one that refuses the complex test equation) says so.
# Small isolated patches are true: dopri5's two dots in Re z > 0 are discs
# around zeros of its R(z) (|R| <= 1 near a zero), where one step does not
# grow although the exact solution does.  The point at z = 1 in the
# backward Euler and BDF2 panels is the grid point where their step's
# equation is singular (no value, left white).
# Square panels (the plane is as tall as wide) on a near-square page, so
# the panels fill their cells.
# Writes OUTDIR/regions.png (or .svg); see plots/style.gp.
call 'style.gp' 'regions' 1300 1400

reg = datadir.'/region.dat'
stats reg using 2:3 nooutput
n = STATS_blocks
remin = STATS_min_x; remax = STATS_max_x; immin = STATS_min_y; immax = STATS_max_y
array name[n]
array partial[n]  # most of the grid failed (a stepper that refuses complex z)
do for [i = 1:n] {
    stats reg index (i-1) using (name[i] = strcol(1), 0) nooutput
    stats reg index (i-1) using 4 nooutput
    partial[i] = STATS_records < STATS_invalid
}
cols = n <= 4 ? n : (n <= 6 ? 3 : 4)
rows = (n + cols - 1) / cols
set multiplot layout rows, cols title "stability regions: where a step does not grow, |R(z)| <= 1, z = h{/Symbol l}\n(symplectic Euler, Verlet: the oscillator's map at h{/Symbol w} = |z|, {/Symbol z} = -Re z/|z|; Verlet, BDF2: the map a run iterates)\nisolated dots are true: small discs of |R| <= 1 around zeros of R(z) (dopri5's two, in Re z > 0);\nthe point at z = 1 (backward Euler, BDF2): the step's equation is singular there, no value"
set view map
set size ratio -1
set xrange [remin:remax]
set yrange [immin:immax]
set xlabel 'Re z' offset 0, 0.5
set ylabel 'Im z' offset 1.5, 0
set xtics 2
set ytics 2
unset colorbox
unset key
set pm3d map corners2color c1
set xzeroaxis lt 1 lc rgb '#808080'
set yzeroaxis lt 1 lc rgb '#808080'
# the boundaries, contoured once per stepper into $cI (before the panels:
# contour lines themselves cannot take the stepper's colour)
set contour base
set cntrparam levels discrete 1
unset surface
do for [i = 1:n] {
    if (!partial[i]) { # a stepper failing on most of the plane has no boundary
        eval sprintf('set table $c%d', i)
        splot reg index (i-1) using 2:3:4 with lines
        unset table
    }
}
unset contour
set surface
stable(r) = r == r ? (r <= 1 ? 0 : 1) : 1
do for [i = 1:n] {
    set title partial[i] ? name[i].' (no step off the real axis: left blank)' : name[i]
    col = sprintf('#%06x', stepper_rgb(name[i], i))
    # cb 0.5: the stepper's colour half-way to white (stable); 1: white
    set palette defined (0 col, 1 '#ffffff')
    set cbrange [0:1]
    # with image: a bitmap in the svg too (a polygon per grid cell made
    # regions.svg tens of MB)
    boundary = partial[i] ? '' : sprintf(", $c%d using 1:2 with lines lw 2.5 lc rgb col", i)
    eval "plot reg index (i-1) using 2:3:(0.5 * stable($4) + 0.5) with image" . boundary
}
unset multiplot
