# plots/ringing.gp - Crank-Nicolson rings on stiff modes, backward Euler damps.
#
# Reads DATADIR/ringing-test1d-STEPPER.csv and, with ringing_cloth = 1,
# DATADIR/ringing-cloth-STEPPER.csv, for STEPPER crank-nicolson and
# backward-euler, made by (tools/plots.sh)
#   build/tstep run --system test1d --param k=1000 --stepper STEPPER --dt 0.01 \
#       --t-end 0.2 --format csv --out build/plots/data/ringing-test1d-STEPPER.csv
#   build/tstep run --system cloth --param nx=8 --param ny=8 --param drag=0 \
#       --param k_struct=100000 --stepper STEPPER --dt 0.02 --t-end 1 \
#       --format csv --out build/plots/data/ringing-cloth-STEPPER.csv
# Columns used, by name: t, x0 (test1d), v181 (cloth: the vertical velocity
# of the middle particle of the bottom row).
# Left: x' = -1000 x at h = 0.01 (z = -10): Crank-Nicolson multiplies by
# (1 + z/2)/(1 - z/2) = -2/3 each step (a decaying sign flip, -1 as z -> -inf),
# backward Euler by 1/(1 - z) = 1/11; the exact factor is e^-10.
# Right: the hanging cloth with stiff springs released from rest: Crank-
# Nicolson keeps the stiff oscillation, backward Euler damps it out.
# Writes OUTDIR/ringing.png (or .svg); see plots/style.gp.
if (!exists("ringing_cloth")) ringing_cloth = 0
call 'style.gp' 'ringing' (ringing_cloth ? 1400 : 700) 540
set datafile separator comma
set multiplot layout 1, (ringing_cloth ? 2 : 1) title 'A-stable is not L-stable: Crank-Nicolson against backward Euler'
set key inside right top font ',10'
set xlabel 't'
set title "x' = -1000 x, h = 0.01 (z = -10)"
set ylabel 'x'
f(s) = datadir.'/ringing-test1d-'.s.'.csv'
plot f('crank-nicolson') using 't':'x0' with linespoints lw 2 pt 7 ps 0.6 \
        lc rgb stepper_color('crank-nicolson', 1) title 'crank-nicolson (x (-2/3)^n)', \
     f('backward-euler') using 't':'x0' with linespoints lw 2 pt 5 ps 0.6 \
        lc rgb stepper_color('backward-euler', 2) title 'backward-euler (x (1/11)^n)', \
     [0:0.2] exp(-1000 * x) with lines dt 2 lc rgb '#404040' title 'exact e^{-1000 t}'
if (ringing_cloth) {
    g(s) = datadir.'/ringing-cloth-'.s.'.csv'
    set title 'cloth 8x8, k_{struct} = 10^5, h = 0.02: a bottom particle'
    set ylabel 'vertical velocity  [m/s]'
    plot g('crank-nicolson') using 't':'v181' with linespoints lw 2 pt 7 ps 0.5 \
            lc rgb stepper_color('crank-nicolson', 1) title 'crank-nicolson', \
         g('backward-euler') using 't':'v181' with linespoints lw 2 pt 5 ps 0.5 \
            lc rgb stepper_color('backward-euler', 2) title 'backward-euler'
}
unset multiplot
