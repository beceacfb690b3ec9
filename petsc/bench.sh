#!/bin/sh
# make bench-petsc: the grid cloth under PETSc's beuler with the default
# preconditioner (GAMG on the velocity Schur complement) on 1 and 2 ranks,
# beside tstep's own default backward Euler (cg/amg), in the same run:
# repeats interleaved (tstep, PETSc 1 rank, PETSc 2 ranks, then again),
# medians printed.  Time per step is the whole process's wall time over
# the steps for both (system set-up and every preconditioner set-up
# included, the same accounting on both sides; PETSc's TSSolve alone is
# printed beside it), memory the peak resident set of the largest process.
#
#   SIZES="100 300" STEPS=10 REPEATS=3 RANKS="1 2" sh petsc/bench.sh
set -u
T=build/tstep
P=build/tstep-petsc
SIZES=${SIZES:-100}
STEPS=${STEPS:-10}
REPEATS=${REPEATS:-3}
RANKS=${RANKS:-1 2}
DT=0.0166666666667
MPI="mpiexec --allow-run-as-root --oversubscribe"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else if (NR) print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# run_tstep SIZE -> "wall_s max_kb newton linear" in $tmp/t.out
run_tstep() {
    /usr/bin/time -f "%e %M" -o "$tmp/time" $T run --system cloth --param nx=$1 --param ny=$1 \
        --stepper backward-euler --dt $DT --steps $STEPS --stats --out /dev/null 2>"$tmp/t.err"
    nl=$(sed -n 's/.*Newton iterations \([0-9]*\), linear iterations \([0-9]*\).*/\1 \2/p' "$tmp/t.err")
    echo "$(cat "$tmp/time") $nl"
}

# run_petsc SIZE RANKS -> "wall_s max_kb newton linear tssolve_s"
run_petsc() {
    /usr/bin/time -f "%e %M" -o "$tmp/time" $MPI -n $2 $P --system cloth --param nx=$1 --param ny=$1 \
        -ts_type beuler -ts_dt $DT -ts_max_steps $STEPS -ts_max_time 1e9 --stats --out /dev/null \
        2>"$tmp/p.err" || { echo "failed"; return; }
    s=$(sed -n 's/.*in \([0-9.]*\) s without output.*nonlinear iterations \([0-9]*\), linear iterations \([0-9]*\); peak memory \([0-9.]*\) MB.*/\2 \3 \1 \4/p' "$tmp/p.err")
    # mpiexec's own peak is not the rank's: the rank reports its own
    set -- $(cat "$tmp/time") $s
    echo "$1 $(awk -v m="$6" 'BEGIN { printf "%d", m * 1024 }') $3 $4 $5"
}

echo "cloth  who          s/step  ratio   Newton/step  linear/step  TSSolve s/step  peak MB (largest process)"
for n in $SIZES; do
    for r in $(seq "$REPEATS"); do
        echo "t $(run_tstep $n)" >>"$tmp/r$n"
        for k in $RANKS; do echo "p$k $(run_petsc $n $k)" >>"$tmp/r$n"; done
    done
    tw=$(awk '$1 == "t" { print $2 }' "$tmp/r$n" | median)
    for who in t $(for k in $RANKS; do echo p$k; done); do
        if grep -q "^$who failed" "$tmp/r$n"; then echo "$n  $who failed"; continue; fi
        w=$(awk -v w=$who '$1 == w { print $2 }' "$tmp/r$n" | median)
        kb=$(awk -v w=$who '$1 == w { print $3 }' "$tmp/r$n" | median)
        nl=$(awk -v w=$who '$1 == w { print $4 }' "$tmp/r$n" | median)
        li=$(awk -v w=$who '$1 == w { print $5 }' "$tmp/r$n" | median)
        ts=$(awk -v w=$who '$1 == w && NF >= 6 { print $6 }' "$tmp/r$n" | median)
        name=$(case $who in t) echo "tstep amg";; *) echo "petsc ${who#p} rank";; esac)
        awk -v n=$n -v name="$name" -v w=$w -v tw=$tw -v s=$STEPS -v nl=$nl -v li=$li -v ts="$ts" -v kb=$kb \
            'BEGIN { printf "%-6s %-12s %7.4f %6.2fx %11.2f %12.2f %15s %8.1f\n", n "x" n, name, w / s,
                     w / tw, nl / s, li / s, ts == "" ? "-" : sprintf("%.4f", ts / s), kb / 1024 }'
    done
done
echo "(medians of $REPEATS interleaved repeats of $STEPS steps of 1/60 s from rest; ratio = s/step over tstep's)"
