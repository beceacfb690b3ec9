#!/bin/sh
# Cross-checks of the PETSc bridge (make test-petsc): PETSc's integrators
# against tstep's own on the same system, step and time, agreeing to the
# solver tolerances; pins held exactly; usage errors exit 2.
# Ends with the line 'N passed, N failed'.
set -u
T=build/tstep
P=build/tstep-petsc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# Largest |a - b| over the last rows of two trajectories (same columns).
lastdiff() {
    tail -n 1 "$1" >"$tmp/a"
    tail -n 1 "$2" >"$tmp/b"
    awk 'NR == FNR { for (i = 1; i <= NF; i++) a[i] = $i; n = NF; next }
         { if (NF != n) { print "columns differ"; exit }
           m = 0; for (i = 1; i <= NF; i++) { d = a[i] - $i; if (d < 0) d = -d; if (d > m) m = d }
           printf "%.3g\n", m }' "$tmp/a" "$tmp/b"
}

# compare NAME TOL "tstep args" "tstep-petsc args"
compare() {
    name=$1 tol=$2
    if ! $T run $3 >"$tmp/t.dat" 2>"$tmp/t.err"; then bad "$name: tstep run failed: $(cat "$tmp/t.err")"; return; fi
    if ! $P $4 >"$tmp/p.dat" 2>"$tmp/p.err"; then bad "$name: tstep-petsc failed: $(tail -n 3 "$tmp/p.err")"; return; fi
    d=$(lastdiff "$tmp/t.dat" "$tmp/p.dat")
    if awk -v d="$d" -v t="$tol" 'BEGIN { exit !(d + 0 == d && d <= t) }'; then
        ok "$name: max difference $d (tolerance $tol)"
    else
        bad "$name: max difference $d (tolerance $tol)"
    fi
}

TIGHT_T="--newton-tol 1e-12"
TIGHT_P="-snes_rtol 1e-14 -snes_atol 1e-11 -ksp_rtol 1e-13"
for sys in "test1d --param k=10" "test1d --param omega=3" "oscillator --param c=0.3" string \
           "cloth --param nx=6 --param ny=6"; do
    case $sys in cloth*) dt=0.01 tend=0.1 edt=0.001 ;; string) dt=0.05 tend=1 edt=0.002 ;;
                 *) dt=0.05 tend=1 edt=0.05 ;; esac
    compare "beuler vs backward-euler on $sys" 1e-8 \
        "--system $sys --stepper backward-euler --dt $dt --t-end $tend $TIGHT_T" \
        "--system $sys -ts_type beuler -ts_dt $dt -ts_max_time $tend $TIGHT_P"
    compare "rk 4 vs rk4 on $sys" 1e-11 \
        "--system $sys --stepper rk4 --dt $edt --t-end $tend" \
        "--system $sys -ts_type rk -ts_rk_type 4 -ts_dt $edt -ts_max_time $tend"
    if $T list 2>/dev/null | grep -q '^ *crank-nicolson'; then
        # Newton's residual on the stiff string stalls at about 3e-10 with
        # crank-nicolson at this step, so the stop there is the update test:
        # newton-tol 1e-10 (over these 20 steps of a method that damps
        # nothing, 1e-9 left tstep's side 1e-7 from a tight solve); on
        # PETSc's side -snes_stol 1e-14: the assembled J leaves out the
        # damping's position term, so Newton converges linearly and the
        # default step test (1e-8) stopped it 1e-7 away
        # (where the cloth's residual cannot reach -snes_atol)
        compare "cn vs crank-nicolson on $sys" 1e-7 \
            "--system $sys --stepper crank-nicolson --dt $dt --t-end $tend --newton-tol 1e-10" \
            "--system $sys -ts_type cn -ts_dt $dt -ts_max_time $tend $TIGHT_P -snes_stol 1e-14"
    fi
done

# hair (one rank) under the assembled Jacobian
compare "beuler vs backward-euler on hair (assembled, GAMG on S)" 1e-8 \
    "--system hair --stepper backward-euler --dt 0.01 --t-end 0.2 $TIGHT_T" \
    "--system hair -ts_type beuler -ts_dt 0.01 -ts_max_time 0.2 $TIGHT_P"

# The preconditioners that act on the velocity Schur complement S, each once
# on a small cloth against tstep's backward Euler (docs/petsc.md lists them);
# and the matrix-free operator
SMALL="cloth --param nx=12 --param ny=10"
for pc in "-pc_type hypre -pc_hypre_type boomeramg" "-pc_type ml" "-pc_type bjacobi -sub_pc_type icc" \
          "-pc_type lu -pc_factor_mat_solver_type mumps" "-pc_type gamg -tstep_rigid_body" \
          "-tstep_matrix_free" "-tstep_pc_lag 1"; do
    compare "beuler $pc vs backward-euler on the 12x10 cloth" 1e-8 \
        "--system $SMALL --stepper backward-euler --dt 0.01 --t-end 0.1 $TIGHT_T" \
        "--system $SMALL -ts_type beuler -ts_dt 0.01 -ts_max_time 0.1 $TIGHT_P $pc"
done
# an exact solve of S makes the elimination exact: one or two GMRES
# iterations a Newton iteration
$P --system $SMALL -ts_type beuler -ts_dt 0.01 -ts_max_time 0.1 -pc_type lu -tstep_pc_lag 1 --stats >/dev/null 2>"$tmp/lu.err"
nl=$(sed -n 's/.*nonlinear iterations \([0-9]*\).*/\1/p' "$tmp/lu.err")
li=$(sed -n 's/.*linear iterations \([0-9]*\).*/\1/p' "$tmp/lu.err")
if awk -v a="$li" -v b="$nl" 'BEGIN { exit !(b > 0 && a <= 2 * b) }'; then
    ok "-pc_type lu on S: $li linear iterations for $nl Newton iterations"
else
    bad "-pc_type lu on S: $li linear iterations for $nl Newton iterations"
fi

# -tstep_schur false: -pc_type acts on J itself; ILU on it gives the same
# step as no preconditioner, with far fewer linear iterations.
for pc in none ilu; do
    $P --system string -ts_type beuler -ts_dt 0.05 -ts_max_time 1 $TIGHT_P -tstep_schur false -pc_type $pc --stats \
        >"$tmp/pc_$pc.dat" 2>"$tmp/pc_$pc.err"
done
$T run --system string --stepper backward-euler --dt 0.05 --t-end 1 $TIGHT_T >"$tmp/pc_t.dat"
d=$(lastdiff "$tmp/pc_t.dat" "$tmp/pc_ilu.dat")
it_none=$(sed -n 's/.*linear iterations \([0-9]*\).*/\1/p' "$tmp/pc_none.err")
it_ilu=$(sed -n 's/.*linear iterations \([0-9]*\).*/\1/p' "$tmp/pc_ilu.err")
if awk -v d="$d" -v a="$it_ilu" -v b="$it_none" 'BEGIN { exit !(d + 0 == d && d <= 1e-8 && a > 0 && 5 * a < b) }'; then
    ok "assembled J, -pc_type ilu on J of the string: difference $d, linear iterations $it_ilu against $it_none unpreconditioned"
else
    bad "assembled J, -pc_type ilu on J of the string: difference $d, linear iterations $it_ilu against $it_none"
fi

# The system's post-step projection: the cloth on a sphere (one rank, mesh
# cloth so it takes the sequential bridge) against tstep's backward Euler.
MESH="cloth --param mesh=data/cloth.obj --param pin=none --param sphere_x=0.5 --param sphere_y=-1.4 --param sphere_z=0 --param sphere_r=0.3"
# (the collider changes this final state by about 5, so a missing projection fails)
compare "beuler vs backward-euler on a mesh cloth falling on a sphere (post-step)" 1e-7 \
    "--system $MESH --stepper backward-euler --dt 0.005 --t-end 0.4 $TIGHT_T --newton-max 50" \
    "--system $MESH -ts_type beuler -ts_dt 0.005 -ts_max_time 0.4 $TIGHT_P -snes_max_it 50"

# The distributed grid cloth (DMDA): one and two ranks against tstep.
if command -v mpiexec >/dev/null 2>&1; then
    MPI="mpiexec --allow-run-as-root --oversubscribe"
    G="--system cloth --param nx=12 --param ny=10"
    for n in 1 2; do
        if $MPI -n $n $P $G -ts_type beuler -ts_dt 0.01 -ts_max_time 0.1 $TIGHT_P >"$tmp/g$n.dat" 2>"$tmp/g.err"; then
            $T run $G --stepper backward-euler --dt 0.01 --t-end 0.1 $TIGHT_T >"$tmp/gt.dat"
            d=$(lastdiff "$tmp/gt.dat" "$tmp/g$n.dat")
            if awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d <= 1e-8) }'; then
                ok "distributed cloth, $n rank(s), beuler vs backward-euler: $d"
            else
                bad "distributed cloth, $n rank(s), beuler vs backward-euler: $d"
            fi
        else
            bad "distributed cloth on $n rank(s) failed: $(tail -n 3 "$tmp/g.err")"
        fi
    done
    d=$(lastdiff "$tmp/g1.dat" "$tmp/g2.dat")
    if awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d <= 1e-9) }'; then
        ok "distributed cloth: 2 ranks = 1 rank to $d"
    else
        bad "distributed cloth: 2 ranks differ from 1 by $d"
    fi
    $MPI -n 2 $P $G -ts_type beuler -ts_dt 0.01 -ts_max_time 0.1 $TIGHT_P -pc_type bjacobi --stats \
        >"$tmp/gb.dat" 2>"$tmp/gb.err"
    d=$(lastdiff "$tmp/gt.dat" "$tmp/gb.dat")
    it=$(sed -n 's/.*linear iterations \([0-9]*\).*/\1/p' "$tmp/gb.err")
    if awk -v d="$d" -v a="$it" 'BEGIN { exit !(d + 0 == d && d <= 1e-8 && a > 0 && a < 3000) }'; then
        ok "distributed cloth, 2 ranks, assembled P with -pc_type bjacobi: $d, $it linear iterations"
    else
        bad "distributed cloth, 2 ranks, -pc_type bjacobi: difference $d, $it linear iterations"
    fi
    $MPI -n 2 $P $G -ts_type rk -ts_rk_type 4 -ts_dt 0.001 -ts_max_time 0.05 >"$tmp/r2.dat" 2>/dev/null
    $T run $G --stepper rk4 --dt 0.001 --t-end 0.05 >"$tmp/rt.dat"
    d=$(lastdiff "$tmp/rt.dat" "$tmp/r2.dat")
    if awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d <= 1e-11) }'; then
        ok "distributed cloth, 2 ranks, rk 4 vs rk4: $d"
    else
        bad "distributed cloth, 2 ranks, rk 4 vs rk4: $d"
    fi
    # the 100x100 cloth under GAMG (the default) on 1 and 2 ranks, 3 steps of 1/60
    C="--system cloth --param nx=100 --param ny=100"
    $T run $C --stepper backward-euler --dt 0.0166666666667 --steps 3 --newton-tol 1e-11 >"$tmp/ct.dat"
    for n in 1 2; do
        $MPI -n $n $P $C -ts_type beuler -ts_dt 0.0166666666667 -ts_max_steps 3 -ts_max_time 1 \
            -pc_type gamg -snes_rtol 1e-12 -ksp_rtol 1e-10 --every 3 >"$tmp/c$n.dat" 2>"$tmp/c.err" ||
            bad "100x100 cloth, gamg, $n rank(s) failed: $(tail -n 2 "$tmp/c.err")"
        d=$(lastdiff "$tmp/ct.dat" "$tmp/c$n.dat")
        if awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d <= 1e-7) }'; then
            ok "100x100 cloth, -pc_type gamg, $n rank(s) vs backward-euler: $d"
        else
            bad "100x100 cloth, -pc_type gamg, $n rank(s) vs backward-euler: $d"
        fi
    done
    d=$(lastdiff "$tmp/c1.dat" "$tmp/c2.dat")
    if awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d <= 1e-7) }'; then
        ok "100x100 cloth, gamg: 2 ranks = 1 rank to $d"
    else
        bad "100x100 cloth, gamg: 2 ranks differ from 1 by $d"
    fi
    $MPI -n 2 $P $G --param sphere_r=0.3 >"$tmp/o" 2>&1
    rc=$?
    if [ $rc = 2 ] && grep -q "post-step" "$tmp/o"; then ok "distributed cloth with a collider refused"; else bad "distributed collider: exit $rc"; fi
fi

# Pins: the cloth's pinned corners (the first row's ends) do not move.
$P --system cloth --param nx=6 --param ny=6 -ts_type beuler -ts_dt 0.01 -ts_max_time 0.2 \
    --format csv >"$tmp/c.csv" 2>/dev/null
if awk -F, 'NR == 2 { for (i = 2; i <= 4; i++) a[i] = $i; for (i = 17; i <= 19; i++) b[i] = $i }
           NR > 2 { for (i = 2; i <= 4; i++) if ($i != a[i]) bad = 1; for (i = 17; i <= 19; i++) if ($i != b[i]) bad = 1 }
           END { exit bad }' "$tmp/c.csv"; then
    ok "pinned corners held exactly over 20 beuler steps"
else
    bad "pinned corners moved"
fi

# The output is tstep run's format: same header, same row count.
$T run --system oscillator --stepper rk4 --dt 0.1 --t-end 1 --format csv >"$tmp/t.csv"
$P --system oscillator -ts_type rk -ts_rk_type 4 -ts_dt 0.1 -ts_max_time 1 --format csv >"$tmp/p.csv"
if [ "$(head -n 1 "$tmp/t.csv")" = "$(head -n 1 "$tmp/p.csv")" ] &&
   [ "$(wc -l <"$tmp/t.csv")" = "$(wc -l <"$tmp/p.csv")" ]; then
    ok "csv output: same header and rows as tstep run"
else
    bad "csv output differs in layout from tstep run"
fi

# Usage errors: exit 2, naming the bad value.
usage() {
    $P "$@" >"$tmp/o" 2>"$tmp/e"
    rc=$?
    if [ $rc = 2 ] && grep -q -- "$NEEDLE" "$tmp/e" "$tmp/o"; then ok "usage error: $*"; else bad "usage error: $* (exit $rc)"; fi
}
NEEDLE="nosuch" usage --system nosuch
NEEDLE="--system" usage -ts_type rk
NEEDLE="--bogus" usage --system oscillator --bogus 1
NEEDLE="k" usage --system test1d --param k=abc
# Honest ends: a diverging run exits 1 naming the step and time; options
# nobody used exit 2 naming each (unless -options_left no); --version.
expect() { # expect CODE NEEDLE args...
    code=$1 needle=$2
    shift 2
    $P "$@" >"$tmp/o" 2>"$tmp/e"
    rc=$?
    if [ $rc = "$code" ] && grep -q -- "$needle" "$tmp/e" && ! grep -q -- "$needle" "$tmp/o"; then
        ok "exit $code on stderr naming '$needle': $*"
    else
        bad "expected exit $code naming '$needle' on stderr: $* (exit $rc: $(head -c 300 "$tmp/e"))"
    fi
}
expect 1 "step 5 (t = 0.4 to 0.5)" --system test1d --param k=1000 -ts_type euler -ts_dt 0.1 -ts_max_time 5
expect 1 "step 5 (t = 0.4 to 0.5)" --system test1d --param k=1000 -ts_type euler -ts_dt 0.1 -ts_max_time 20
expect 1 "DIVERGED_NONLINEAR_SOLVE" --system cloth --param nx=10 --param ny=10 -ts_dt 1 -snes_max_it 2
expect 2 "-ts_dtt 0.1" --system test1d -ts_dtt 0.1
expect 2 "-snes_rtoll 1" --system test1d -ts_max_time 0.1 -snes_rtoll 1
expect 2 "Unknown TS type" --system test1d -ts_type nosuch
if $P --system test1d -ts_dtt 0.1 -options_left no >/dev/null 2>&1; then
    ok "-options_left no allows an unused option"
else
    bad "-options_left no: exit $?"
fi
if $P --version | grep -q "^tstep-petsc [0-9].*PETSc 3"; then ok "--version"; else bad "--version"; fi
if command -v mpiexec >/dev/null 2>&1; then
    mpiexec --allow-run-as-root --oversubscribe -n 2 $P --system oscillator >"$tmp/o" 2>&1
    rc=$?
    if [ $rc != 0 ] && grep -q "one rank" "$tmp/o"; then ok "two ranks refused with a message"; else bad "two ranks: exit $rc"; fi
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
