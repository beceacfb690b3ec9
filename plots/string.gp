# plots/string.gp - the string in 3-D: snapshots (png, svg; fmt gif makes an animation).
# needs system: string
#
# Reads DATADIR/frames-string.dat, made by
#   build/tstep run --system string --stepper rk4 --dt 0.001 --t-end 2 --every 20 \
#       --format frames --out build/plots/data/frames-string.dat
# (one index block per output time, 'x y z' per particle; y is up).
# The stepper, dt and the time between frames (dt * every) come from
# the file's header (plots/style.gp).  Variable: snap_times (default '0 0.2 0.4 0.6 0.8 1.2').
# Shows the string, pinned at particle 0, swinging down from horizontal.
# Writes OUTDIR/string.png (or .svg, .gif); see plots/style.gp, strand.gp.
snap_times = exists("snap_times") ? snap_times : '0 0.2 0.4 0.6 0.8 1.2'
call 'style.gp' 'string' 1000 700
file = datadir.'/frames-string.dat'
if (run_check(file) ne '') { exit error run_check(file) }
frame_dt = run_frame_dt(file)
call 'strand.gp' 'string' sprintf('string (%s, dt = %g)', run_info(file, 'stepper'), real(run_info(file, 'dt')))
