# plots/hair.gp - a curly hair strand in 3-D: snapshots (png, svg) and an
# needs system: hair
# animation of it swinging (gif animate).
#
# Reads DATADIR/frames-hair.dat, made by
#   build/tstep run --system hair --stepper backward-euler --dt 0.001 --t-end 3 \
#       --param curl=5 --param n=40 --param curl_radius=0.008 --every 20 \
#       --format frames --out build/plots/data/frames-hair.dat
# (one index block per output time, 'x y z' per particle; y is up).
# Variables: frame_dt (default 0.02 = dt * every), snap_times (default
# '0 0.1 0.2 0.4 0.8 3').
# Shows the helix, root pinned, swinging down from horizontal and keeping
# its curls.  Writes OUTDIR/hair.png (or .svg, .gif); see plots/strand.gp.
frame_dt = exists("frame_dt") ? frame_dt : 0.02
snap_times = exists("snap_times") ? snap_times : '0 0.1 0.2 0.4 0.8 3'
call 'style.gp' 'hair' 1000 700
file = datadir.'/frames-hair.dat'
call 'strand.gp' 'hair' 'curly hair (backward Euler, dt = 0.001)'
