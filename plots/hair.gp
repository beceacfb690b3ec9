# plots/hair.gp - a curly hair strand in 3-D: snapshots (png, svg) and an
# needs system: hair
# animation of it swinging (gif animate).
#
# Reads DATADIR/frames-hair.dat, made by
#   build/tstep run --system hair --stepper backward-euler --dt 0.001 --t-end 3 \
#       --param curl=5 --param n=40 --param curl_radius=0.008 --every 20 \
#       --format frames --out build/plots/data/frames-hair.dat
# (one index block per output time, 'x y z' per particle; y is up).
# The stepper, dt and the time between frames (dt * every) come from the
# file's header (plots/style.gp).  Variable: snap_times (default
# '0 0.1 0.2 0.4 0.8 3').
# Shows the helix, root pinned, swinging down from horizontal and keeping
# its curls.  Writes OUTDIR/hair.png (or .svg, .gif); see plots/strand.gp.
snap_times = exists("snap_times") ? snap_times : '0 0.1 0.2 0.4 0.8 3'
call 'style.gp' 'hair' 1000 700
file = datadir.'/frames-hair.dat'
if (run_check(file) ne '') { exit error run_check(file) }
frame_dt = run_frame_dt(file)
call 'strand.gp' 'hair' sprintf('curly hair (%s, dt = %g)', run_info(file, 'stepper'), real(run_info(file, 'dt')))
