# plots/errortime.gp - the error of a run against time, a line per stepper,
# against the exact solution (oscillator) and a computed reference (string).
#
# Reads, from DATADIR, for each SYSTEM in `errsystems` (default
# "oscillator string") and each stepper in `steppers`:
#   error-SYSTEM-STEPPER.dat  made by
#     build/tstep run --system oscillator --stepper STEPPER --dt 0.1 --t-end 20 \
#         --out /dev/null --error build/plots/data/error-oscillator-STEPPER.dat
#     build/tstep run --system string --stepper STEPPER --dt 2e-4 --t-end 1 --every 10 \
#         --out /dev/null --error build/plots/data/error-string-STEPPER.dat
#   columns 1 t, 5 error (max norm over x and v), 6 reference_error (second-order
#   systems: t step error_x error_v error reference_error).
# A file that is missing (a run that could not start) is skipped; a run that
# diverged ends where it failed.  On the string the reference's own
# estimated error is drawn dashed: the errors above it are measured.
# Writes OUTDIR/errortime.png (or .svg); see plots/style.gp.
if (!exists("errsystems")) errsystems = 'oscillator string'
if (!exists("steppers")) steppers = 'forward-euler midpoint trapezoid rk4 backward-euler'
call 'style.gp' 'errortime' (760 * words(errsystems)) 560

set multiplot layout 1, words(errsystems)
set logscale y
set format y '10^{%L}'
set xlabel 't'
set ylabel 'max-norm error of (x, v)'
set key outside bottom center horizontal font ',10' maxcols 3
do for [sys in errsystems] {
    set title sprintf('%s: error against time', sys)
    set yrange [*:*]
    # the steppers with a file for this system (a run that could not start has none)
    have = ''
    do for [s in steppers] {
        if (system('test -s '.datadir.'/error-'.sys.'-'.s.'.dat && echo 1 || echo 0') + 0) {
            have = have.' '.s
        }
    }
    file(s) = datadir.'/error-'.sys.'-'.s.'.dat'
    plot for [i = 1:words(have)] file(word(have, i)) \
             using 1:($5 > 0 ? $5 : NaN) with lines lw 2 \
             lc rgb stepper_color(word(have, i), i) title word(have, i), \
         file(word(have, 1)) using 1:($6 > 0 ? $6 : NaN) \
             with lines dt 2 lw 1.5 lc rgb '#404040' title "reference's estimated error"
}
unset multiplot
