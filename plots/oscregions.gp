# plots/oscregions.gp - each stepper's stability region on the second-order
# test equation x'' = -w^2 x - 2 zeta w x', in the (h w, zeta) plane.
#
# Reads DATADIR/region-oscillator.dat, made by
#   build/tstep region --stepper all --plane oscillator --hw-max 4 \
#       --out build/plots/data/region-oscillator.dat
# columns 1 stepper, 2 h w, 3 zeta, 4 rho (the spectral radius of the
# stepper's one-step 2x2 map on the oscillator, found by running it); one
# grid block per stepper.  Each panel shades rho <= 1 (one step does not
# grow) in the stepper's colour and draws its boundary.  This is the plane a
# partitioned stepper (symplectic Euler, Verlet) is judged in: its limit on
# an undamped mode is the boundary at zeta = 0 (h w = 2 for both), where
# forward Euler, midpoint and trapezoid have none.
# Writes OUTDIR/oscregions.png (or .svg); see plots/style.gp.
call 'style.gp' 'oscregions' 1600 900

reg = datadir.'/region-oscillator.dat'
stats reg using 2:3 nooutput
n = STATS_blocks
hmax = STATS_max_x; zmin = STATS_min_y; zmax = STATS_max_y
array name[n]
do for [i = 1:n] {
    stats reg index (i-1) using (name[i] = strcol(1), 0) nooutput
}
cols = n <= 4 ? n : (n <= 6 ? 3 : 4)
rows = (n + cols - 1) / cols
set multiplot layout rows, cols title "stability on x'' = -{/Symbol w}^2 x - 2{/Symbol z}{/Symbol w} x': where the one-step map does not grow, {/Symbol r} <= 1"
set view map
set xrange [0:hmax]
set yrange [zmin:zmax]
set xlabel 'h{/Symbol w}'
set ylabel '{/Symbol z}'
unset colorbox
unset key
set pm3d map corners2color c1
set contour base
set cntrparam levels discrete 1
unset surface
array boundary[n]  # points on the boundary rho = 1 (0: stable or unstable everywhere)
do for [i = 1:n] {
    eval sprintf('set table $c%d', i)
    splot reg index (i-1) using 2:3:4 with lines
    unset table
    boundary[i] = 0
    eval sprintf('do for [j = 1:|$c%d|] { line = $c%d[j]; ' . \
                 'if (strlen(line) > 0 && line[1:1] ne "#") { boundary[i] = boundary[i] + 1 } }', \
                 i, i)
}
unset contour
set surface
stable(r) = r == r ? (r <= 1 ? 0 : 1) : 1
do for [i = 1:n] {
    set title name[i]
    col = sprintf('#%06x', stepper_rgb(name[i], i))
    set palette defined (0 col, 1 '#ffffff')
    set cbrange [0:1]
    # with image: a bitmap in the svg too (a polygon per grid cell would make
    # the svg megabytes; make plots refuses figures over 2 MB)
    edge = boundary[i] > 0 ? sprintf(", $c%d using 1:2 with lines lw 2.5 lc rgb col", i) : ''
    eval "plot reg index (i-1) using 2:3:(0.5 * stable($4) + 0.5) with image" . edge
}
unset multiplot
