# plots/strand.gp - shared body of string.gp and hair.gp: a strand of
# particles (one polyline per frame) in 3-D.  Not a figure of its own:
#   call 'strand.gp' NAME TITLE
# with `file`, `frame_dt` and `snap_times` (space-separated times for the
# snapshot overlay) set.  fmt png/svg: the strand at the snapshot times,
# light to dark, root marked; fmt gif: every frame, animated.
stats file using 1:3 nooutput
frames = STATS_blocks
xlo = STATS_min_x; xhi = STATS_max_x; zlo = STATS_min_y; zhi = STATS_max_y
stats file using 2 nooutput
ylo = STATS_min; yhi = STATS_max
pad = 0.05 * (xhi - xlo > yhi - ylo ? xhi - xlo : yhi - ylo)
zmid = 0.5 * (zlo + zhi)
zhalf = 0.5 * (zhi - zlo) > 3 * pad ? 0.5 * (zhi - zlo) + pad : 3 * pad
set xrange [xlo - pad : xhi + pad]
set yrange [zmid - zhalf : zmid + zhalf]
set zrange [ylo - pad : yhi + pad]
set view 70, 20, 1.15
set view equal xyz
set xyplane 0
set xlabel 'x'
set ylabel 'z'
set zlabel 'y (up)' rotate parallel
set tics font ',8'
set border 4095 lc rgb '#909090'
set grid
if (fmt eq 'gif') {
    set terminal gif animate delay 4 loop 0 optimize size 640, 540 font 'Sans,10' background '#ffffff'
    set output outdir.'/'.ARG1.'.gif'
    unset key
    do for [k = 0:frames - 1] {
        set title sprintf('%s: t = %.2f s', ARG2, k * frame_dt)
        splot file index k using 1:3:2 with linespoints pt 7 ps 0.5 lw 2 lc rgb '#1f5fa0', \
              file index k every ::0::0 using 1:3:2 with points pt 7 ps 1.5 lc rgb '#000000'
    }
} else {
    set title ARG2.': snapshots, light to dark'
    set key outside right top Left reverse font ',10'
    n = words(snap_times)
    frame(t) = int(t / frame_dt + 0.5) < frames ? int(t / frame_dt + 0.5) : frames - 1
    shade(j) = sprintf('#%02x%02x%02x', int(200 - 170 * (j - 1.0) / (n > 1 ? n - 1 : 1)), \
        int(215 - 135 * (j - 1.0) / (n > 1 ? n - 1 : 1)), int(240 - 80 * (j - 1.0) / (n > 1 ? n - 1 : 1)))
    splot for [j = 1:n] file index frame(real(word(snap_times, j))) using 1:3:2 \
            with linespoints pt 7 ps 0.4 lw 2 lc rgb shade(j) \
            title sprintf('t = %.2f s', frame(real(word(snap_times, j))) * frame_dt), \
          file index 0 every ::0::0 using 1:3:2 with points pt 7 ps 1.6 lc rgb '#000000' title 'root (pinned)'
}
