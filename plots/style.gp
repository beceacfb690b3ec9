# plots/style.gp - shared set-up for the figures of plots/*.gp.
#
#   call 'style.gp' NAME WIDTH HEIGHT
#
# Chooses the terminal from `fmt` (png: pngcairo, svg; default png) and
# opens OUTDIR/NAME.FMT.  The variables a figure script reads, each with a
# default so a script also runs on its own from the repository root:
#   datadir  where the data are         (build/plots/data)
#   outdir   where the figures go       (build/plots)
#   fmt      png or svg                 (png)
# tools/plots.sh (make plots) sets them and runs every script twice, once
# per format (three times, with gif, for the animations).  fmt = gif opens
# a pngcairo terminal on NAME.gif: the script then switches to gif animate.
datadir = exists("datadir") ? datadir : 'build/plots/data'
outdir = exists("outdir") ? outdir : 'build/plots'
fmt = exists("fmt") ? fmt : 'png'
if (fmt eq 'svg') {
    set terminal svg size int(ARG2), int(ARG3) dynamic enhanced font 'Sans,12' background '#ffffff'
} else {
    set terminal pngcairo size int(ARG2), int(ARG3) enhanced font 'Sans,11' background '#ffffff'
}
set output outdir.'/'.ARG1.'.'.fmt

set border lw 1.2 lc rgb '#404040'
set grid lw 0.6 lc rgb '#d8d8d8'
set key opaque box lt 1 lc rgb '#c0c0c0' samplen 2.5 spacing 1.1

# Each stepper has one colour in every figure; a stepper not named here (a
# student's) takes colour i of a spare list, i its position in the figure.
# stepper_rgb gives it as a number (for `lc rgb variable`), stepper_color
# as a string.
array spare_rgb[7] = [0xe377c2, 0x17becf, 0xbcbd22, 0x7f7f7f, 0x393b79, 0xad494a, 0x637939]
stepper_rgb(s, i) = \
    s eq 'forward-euler' ? 0xd62728 : \
    s eq 'midpoint' ? 0xff7f0e : \
    s eq 'trapezoid' ? 0x2ca02c : \
    s eq 'rk4' ? 0x1f77b4 : \
    s eq 'backward-euler' ? 0x9467bd : \
    s eq 'backward-euler-linear' ? 0x8c564b : \
    s eq 'backward-euler-opt' ? 0x5f4b8b : \
    s eq 'symplectic-euler' ? 0xe377c2 : \
    s eq 'verlet' ? 0x17becf : \
    s eq 'implicit-midpoint' ? 0xbcbd22 : \
    s eq 'crank-nicolson' ? 0xff1493 : \
    s eq 'bdf2' ? 0x393b79 : \
    s eq 'ralston2' ? 0xad494a : \
    s eq 'heun3' ? 0x637939 : \
    s eq 'ssprk3' ? 0xe7ba52 : \
    s eq 'dopri5' ? 0x6b6ecf : \
    spare_rgb[(i - 1) % 7 + 1]
stepper_color(s, i) = sprintf('#%06x', stepper_rgb(s, i))
# Line width of curve i of n: from 4 (the first, drawn first) down to 1,
# so a curve drawn over an earlier one leaves it visible at its edges.
stepper_lw(i, n) = n > 1 ? 1.0 + 3.0 * (n - i) / (n - 1.0) : 2.0
# Curves that lie on one another (midpoint and trapezoid share R(z); the
# backward-Euler variants share their step) stay distinguishable: each
# stepper also has its own dash type and point type.
stepper_dash(s, i) = \
    s eq 'forward-euler' ? 1 : \
    s eq 'midpoint' ? 1 : \
    s eq 'trapezoid' ? 2 : \
    s eq 'rk4' ? 1 : \
    s eq 'backward-euler' ? 1 : \
    s eq 'backward-euler-linear' ? 2 : \
    s eq 'backward-euler-opt' ? 3 : (i - 1) % 5 + 1
stepper_point(s, i) = \
    s eq 'forward-euler' ? 7 : \
    s eq 'midpoint' ? 5 : \
    s eq 'trapezoid' ? 4 : \
    s eq 'rk4' ? 9 : \
    s eq 'backward-euler' ? 13 : \
    s eq 'backward-euler-linear' ? 6 : \
    s eq 'backward-euler-opt' ? 2 : (i - 1) % 13 + 1

# What a run wrote about itself, read from its own output,
# so that a figure draws the run as it was simulated (never a copy here).
#
#   run_info(FILE, 'dt')          '# dt H' of `tstep run --format frames`
#                                 (also 'stepper', 'every', 'frame_row')
#   run_param(FILE, 'sphere_r')   '# param sphere_r VALUE': a system parameter
#   run_frame_dt(FILE)            time between frames: dt * every
#   run_check(FILE)               "" or, when FILE has no header, the error
#                                 to stop with (exit error run_check(FILE))
# Each returns a string ("" when absent); real() or int() it for numbers.
run_info(f, key) = system(sprintf( \
    "awk '/^# t = /{exit} $1 == \"#\" && $2 == \"%s\" {print $3; exit}' '%s'", key, f))
run_param(f, name) = system(sprintf( \
    "awk '/^# t = /{exit} $1 == \"#\" && $2 == \"param\" && $3 == \"%s\" {print $4; exit}' '%s'", \
    name, f))
run_frame_dt(f) = real(run_info(f, 'dt')) * int(run_info(f, 'every'))
run_check(f) = run_info(f, 'dt') eq '' ? \
    sprintf("%s: no '# dt' header line: made by an older tstep run --format frames?", f) : ''
