# plots/cloth.gp - the cloth in 3-D: snapshots (png, svg) or an animation (gif).
# needs system: cloth
#
# Reads DATADIR/frames-cloth.dat, made by
#   build/tstep run --system cloth --stepper backward-euler --dt 0.01 --t-end 3 \
#       --param sphere_r=0.3 --every 5 --format frames \
#       --out build/plots/data/frames-cloth.dat
# (tstep run --format frames: one index block per output time, 'x y z' per
# particle, a blank line after each grid row, so splot draws the mesh).
# Everything drawn comes from that file's header (plots/style.gp): the
# stepper and dt of the titles, the time between frames (dt * every), the
# sphere collider (sphere_x/y/z, sphere_r; 0 draws none) and the grid row
# (frame_row: the pinned top corners are particles 0 and frame_row - 1).
# y is up in tstep; here it is the vertical axis.
# fmt png/svg: OUTDIR/cloth.png: four panels, from the flat start through
# the fall to the cloth hanging from its two pins, draped over the sphere:
# the frames nearest to 0, T/10, 4T/15 and T (T the last frame's time; 0.3
# and 0.8 s of the default 3 s), each titled with its own time, read from
# its '# t = ' line.  The collider puts particles on the sphere, so the
# cloth's flat facets between them are chords inside it: the sphere is drawn
# smaller by twice the sagitta of a grid diagonal, s^2 / r (s the grid
# spacing), so the cloth lying on it hides it.
# fmt gif: OUTDIR/cloth.gif, every frame, set terminal gif animate.
call 'style.gp' 'cloth' 1400 1000
file = datadir.'/frames-cloth.dat'
if (run_check(file) ne '') { exit error run_check(file) }
frame_dt = run_frame_dt(file)
sphere_x = real(run_param(file, 'sphere_x'))
sphere_y = real(run_param(file, 'sphere_y'))
sphere_z = real(run_param(file, 'sphere_z'))
sphere_r = real(run_param(file, 'sphere_r'))
nx = int(run_info(file, 'frame_row'))
spacing = real(run_param(file, 'width')) / (nx - 1)
sphere_draw = sphere_r > 0 ? sphere_r - spacing**2 / sphere_r : 0
# the time of frame k, from its '# t = ' line
frame_t(k) = real(system(sprintf("awk '/^# t = / { if (n++ == %d) { print $4; exit } }' '%s'", \
    k, file)))
stepper = run_info(file, 'stepper')
run_dt = real(run_info(file, 'dt'))
if (fmt eq 'gif') {
    set terminal gif animate delay 5 loop 0 optimize size 640, 540 font 'Sans,10' background '#ffffff'
    set output outdir.'/cloth.gif'
}
stats file using 1:3 nooutput
frames = STATS_blocks
xlo = STATS_min_x; xhi = STATS_max_x; zlo = STATS_min_y; zhi = STATS_max_y
stats file using 2 nooutput
ylo = STATS_min; yhi = STATS_max
if (sphere_r > 0) {
    xlo = xlo < sphere_x - sphere_r ? xlo : sphere_x - sphere_r
    xhi = xhi > sphere_x + sphere_r ? xhi : sphere_x + sphere_r
    ylo = ylo < sphere_y - sphere_r ? ylo : sphere_y - sphere_r
    zlo = zlo < sphere_z - sphere_r ? zlo : sphere_z - sphere_r
    zhi = zhi > sphere_z + sphere_r ? zhi : sphere_z + sphere_r
}
set xrange [xlo - 0.05 : xhi + 0.05]
set yrange [zlo - 0.05 : zhi + 0.05]
set zrange [ylo - 0.05 : yhi + 0.05]
set view 62, 28, 1.1
set view equal xyz
set xyplane 0
set xlabel 'x'
set ylabel 'z'
set zlabel 'y (up)' rotate parallel
set tics font ',8'
unset key
set border 4095 lc rgb '#909090'
set grid
set parametric
set urange [0:2 * pi]
set vrange [-pi / 2:pi / 2]
set isosamples 24, 12
set hidden3d offset 0 trianglepattern 3
sx(u, v) = sphere_x + sphere_draw * cos(v) * cos(u)
sz(u, v) = sphere_z + sphere_draw * cos(v) * sin(u)
sy(u, v) = sphere_y + sphere_draw * sin(v)
# the sphere (or nothing) as the first plot element of a frame
sphere = sphere_r > 0 ? "sx(u, v), sz(u, v), sy(u, v) with lines lc rgb '#c0a070'," : ""
draw(k) = sprintf("splot %s file index %d using 1:3:2 with lines lc rgb '#1f5fa0', " . \
    "file index %d every %d::0:0:%d:0 using 1:3:2 with points pt 7 ps 1.2 lc rgb '#000000' nohidden3d", \
    sphere, k, k, nx - 1, nx - 1)
if (fmt eq 'gif') {
    do for [k = 0:frames - 1] {
        set title sprintf('cloth, %s: t = %.2f s', stepper, frame_t(k))
        eval draw(k)
    }
} else {
    set multiplot layout 2, 2 title sprintf('cloth (%s, dt = %g): pinned at two corners, falling onto a sphere of radius %g', stepper, run_dt, sphere_r)
    # the start, two moments of the fall, and the last frame: the nearest
    # frames to 0, T/10, 4T/15 and T, distinct however short the run
    t_last = frame_t(frames - 1)
    array want[4] = [0, t_last / 10, 4 * t_last / 15, t_last]
    array pick[4]
    do for [j = 1:4] {
        pick[j] = floor(want[j] / frame_dt + 0.5)
        pick[j] = pick[j] > frames - 1 ? frames - 1 : pick[j]
        if (j > 1 && pick[j] <= pick[j - 1] && pick[j - 1] < frames - 1) { pick[j] = pick[j - 1] + 1 }
    }
    do for [j = 1:4] {
        k = pick[j]
        set title sprintf('t = %.2f s', frame_t(k))
        eval draw(k)
    }
    unset multiplot
}
