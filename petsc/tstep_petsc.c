/* tstep-petsc: any tstep system integrated by PETSc's TS: the program
 * around tstep/petsc.h (petsc/bridge.c), which says what TS sees.  tstep's
 * own options choose the system and the output, which is tstep run's format
 * (t, x.., v.., energy), so the gnuplot scripts draw it; every other option
 * goes to PETSc.  The grid cloth runs distributed (tstep_petsc_grid_*);
 * any other system on one rank (with more it says so and exits 2). */
#include <math.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/linalg.h"
#include "tstep/petsc.h"
#include "tstep/run.h"
#include "tstep/version.h"

typedef struct {
    ts_system *sys;         /* rank 0: the system (energy); the whole cloth on the grid path */
    tstep_petsc_grid *grid; /* the distributed path, or NULL */
    size_t ny;
    double *y;              /* rank 0: the state in tstep's layout */
    int rank;
    double write_seconds;   /* wall time spent gathering and writing output */
    FILE *out;
    int csv;
    PetscInt every;
    PetscInt last_step; /* the last step written */
    PetscReal limit;    /* |U|_inf beyond this (or not finite) is divergence */
    PetscInt bad_step;  /* the step that diverged, or -1 */
    PetscReal bad_t0, bad_t1, bad_norm, prev_t;
} output;

static const char usage[] =
    "Usage: tstep-petsc --system S [--param key=value]... [--out FILE]\n"
    "                   [--format dat|csv] [--every N] [PETSc options]\n"
    "\n"
    "Integrates a tstep system with PETSc's TS.  The system's first-order view\n"
    "Y' = F(t, Y) is the right-hand side; implicit TS types see the implicit\n"
    "form Y' - F(t, Y) = 0 with its Jacobian: assembled (block size 3) for\n"
    "spring networks, preconditioned through the velocity Schur complement;\n"
    "matrix-free from the system's Jacobian products for other systems.\n"
    "\n"
    "tstep options:\n"
    "  --system S         the system (see tstep list)\n"
    "  --param key=value  a system parameter, repeatable\n"
    "  --out FILE         write the trajectory there (default: standard output)\n"
    "  --format dat|csv   tstep run's formats: t, x.., v.. (order 2), energy\n"
    "  --every N          write every N-th step (default 1; the last always)\n"
    "  --stats            print steps, wall time per step (output excluded) and\n"
    "                     iteration counts on standard error\n"
    "\n"
    "PETSc options (defaults here: -ts_type beuler -ts_dt 0.01 -ts_max_time 1,\n"
    "the final time matched by the last step):\n"
    "  -ts_type beuler|cn|theta|bdf|rk|euler|ssp|arkimex|...  (-ts_rk_type 4 ...)\n"
    "  -ts_dt H  -ts_max_time T  -ts_max_steps N  -ts_adapt_type none|basic\n"
    "  -snes_rtol, -snes_atol, -ksp_type, -ksp_rtol, -pc_type ...\n"
    "  -ts_monitor  -snes_monitor  -ksp_monitor  -log_view\n"
    "Implicit types on spring networks (string, hair, cloth): -pc_type (default\n"
    "gamg; hypre, bjacobi, icc, lu -pc_factor_mat_solver_type mumps, ...) acts on\n"
    "the velocity Schur complement S = a M - D - K/a (docs/petsc.md); other\n"
    "systems: matrix-free, no preconditioner unless asked.  GMRES uses modified\n"
    "Gram-Schmidt.\n"
    "The grid cloth (no mesh=) runs distributed over the MPI ranks (mpiexec -n N)\n"
    "on a 2-D DMDA; every other system runs on one rank.  Post-step projections\n"
    "(collider, strain limit) are applied on one rank and refused distributed.\n"
    "Options PETSc did not use are an error (exit 2, each named) unless\n"
    "-options_left no.  Bridge options: -tstep_matrix_free (the operator is the\n"
    "exact matrix-free product), -tstep_schur false (-pc_type acts on J),\n"
    "-tstep_pc_lag N (rebuild the PC of S every N Jacobians, default 4),\n"
    "-tstep_rigid_body (rigid-body modes as S's near-null space).\n"
    "Exit status: 0 success, 1 the integration failed (a diverging or\n"
    "non-finite state, a failed solve; step and time named), 2 usage error.\n"
    "--version prints the versions of tstep and PETSc.\n";

/* --- output ------------------------------------------------------------------ */

static void write_row(output *b, double t, const double *y)
{
    const char *sep = b->csv ? "," : " ";
    fprintf(b->out, "%.17g", t);
    for (size_t i = 0; i < b->ny; i++)
        fprintf(b->out, "%s%.17g", sep, y[i]);
    if (b->sys->ops->energy) {
        double ke = 0.0, pe = 0.0;
        const double *v = b->sys->order == 2 ? y + b->sys->n : NULL;
        if (b->sys->ops->energy(b->sys, t, y, v, &ke, &pe) == TS_OK)
            fprintf(b->out, "%s%.17g", sep, ke + pe);
        else
            fprintf(b->out, "%snan", sep);
    }
    fputc('\n', b->out);
}

static void write_header(output *b)
{
    const char *sep = b->csv ? "," : " ";
    fputs(b->csv ? "t" : "# t", b->out);
    for (size_t i = 0; i < b->sys->n; i++)
        fprintf(b->out, "%sx%zu", sep, i);
    for (size_t i = 0; b->sys->order == 2 && i < b->sys->n; i++)
        fprintf(b->out, "%sv%zu", sep, i);
    if (b->sys->ops->energy)
        fprintf(b->out, "%senergy", sep);
    fputc('\n', b->out);
}

/* Write the state U at time t (collective on the grid path: rank 0 writes). */
static PetscErrorCode write_state(output *b, double t, Vec U)
{
    PetscFunctionBeginUser;
    double t0 = MPI_Wtime();
    if (b->grid) {
        PetscCall(tstep_petsc_grid_gather(b->grid, U, b->y));
    } else {
        const PetscScalar *u;
        PetscCall(VecGetArrayRead(U, &u));
        memcpy(b->y, u, b->ny * sizeof *b->y);
        PetscCall(VecRestoreArrayRead(U, &u));
    }
    if (b->rank == 0)
        write_row(b, t, b->y);
    b->write_seconds += MPI_Wtime() - t0;
    PetscFunctionReturn(0);
}

/* After each step: tstep run's divergence test (tstep/run.h), |U|_inf above
 * TS_DIVERGENCE_FACTOR max(1, |U(0)|_inf) or not finite, stops TS with an
 * error (every rank has the same norm; TS resets a converged reason set
 * here) and the state is not written; then the output. */
static PetscErrorCode monitor(TS ts, PetscInt step, PetscReal t, Vec U, void *ctx)
{
    output *b = ctx;
    PetscReal tmax, norm;
    PetscFunctionBeginUser;
    PetscCall(VecNorm(U, NORM_INFINITY, &norm));
    if (step == 0)
        b->limit = TS_DIVERGENCE_FACTOR * PetscMax(1.0, norm);
    if (!(norm <= b->limit)) {
        b->bad_step = step, b->bad_t0 = b->prev_t, b->bad_t1 = t, b->bad_norm = norm;
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_NOT_CONVERGED, "the state diverged");
    }
    b->prev_t = t;
    PetscCall(TSGetMaxTime(ts, &tmax));
    int last = t >= tmax - 1e-12 * fmax(1.0, fabs(tmax));
    if (step % b->every == 0 || last) {
        PetscCall(write_state(b, t, U));
        b->last_step = step;
    }
    PetscFunctionReturn(0);
}

/* --- tstep's options ------------------------------------------------------------ */

/* --help and --version print on standard output and exit 0. */
static void info_option(const char *a)
{
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        fputs(usage, stdout);
        exit(0);
    }
    if (strcmp(a, "--version") == 0) {
        printf("tstep-petsc %s (PETSc %d.%d.%d)\n", TSTEP_VERSION, PETSC_VERSION_MAJOR,
               PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR);
        exit(0);
    }
}

/* tstep's own options: the system, its parameters and the output */
typedef struct {
    const ts_system_type *type;
    ts_params params;
    const char *outpath;
    int csv, stats;
    long every;
} cli;

/* Take tstep's own options out of argv into c (PETSc sees the rest). */
static int parse_tstep_options(int *argc, char **argv, cli *c)
{
    int k = 1;
    const char *system = NULL;
    static char *pairs[256];
    int npairs = 0;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        info_option(a);
        if (strcmp(a, "--stats") == 0) {
            c->stats = 1;
            continue;
        }
        int takes = strcmp(a, "--system") == 0 || strcmp(a, "--param") == 0 ||
                    strcmp(a, "--out") == 0 || strcmp(a, "--format") == 0 ||
                    strcmp(a, "--every") == 0;
        if (!takes) {
            if (strncmp(a, "--", 2) == 0) {
                fprintf(stderr, "tstep-petsc: unknown option '%s' (tstep options: --system, "
                                "--param, --out, --format, --every, --stats, --version; PETSc options start with "
                                "one '-')\n", a);
                return 2;
            }
            argv[k++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc) {
            fprintf(stderr, "tstep-petsc: option '%s' needs a value\n", a);
            return 2;
        }
        const char *val = argv[++i];
        if (strcmp(a, "--system") == 0) {
            system = val;
        } else if (strcmp(a, "--param") == 0) {
            if (npairs == 256) {
                fprintf(stderr, "tstep-petsc: too many --param\n");
                return 2;
            }
            pairs[npairs++] = (char *)val;
        } else if (strcmp(a, "--out") == 0) {
            c->outpath = val;
        } else if (strcmp(a, "--format") == 0) {
            if (strcmp(val, "csv") && strcmp(val, "dat")) {
                fprintf(stderr, "tstep-petsc: --format: '%s' is not dat or csv\n", val);
                return 2;
            }
            c->csv = strcmp(val, "csv") == 0;
        } else {
            char *end;
            c->every = strtol(val, &end, 10);
            if (*end || end == val || c->every < 1) {
                fprintf(stderr, "tstep-petsc: --every: '%s' is not a whole number >= 1\n", val);
                return 2;
            }
        }
    }
    argv[k] = NULL;
    *argc = k;
    if (!system) {
        fprintf(stderr, "tstep-petsc: --system is required\n%s", usage);
        return 2;
    }
    if (!(c->type = ts_system_find(system))) {
        fprintf(stderr, "tstep-petsc: --system: unknown system '%s' (valid:", system);
        for (size_t i = 0; ts_system_at(i); i++)
            fprintf(stderr, " %s", ts_system_at(i)->name);
        fprintf(stderr, ")\n");
        return 2;
    }
    ts_params_init(&c->params, c->type->params);
    for (int i = 0; i < npairs; i++)
        if (ts_params_set_pair(&c->params, pairs[i])) {
            fprintf(stderr, "tstep-petsc: --param: %s\n", ts_error_detail());
            return 2;
        }
    return 0;
}

/* The grid cloth (no mesh file) runs distributed; every other system on
 * the sequential bridge. */
static int is_grid_cloth(const ts_system_type *type, const ts_params *params)
{
    return strcmp(type->name, "cloth") == 0 && ts_params_text(params, "mesh")[0] == '\0';
}

/* --- the run ------------------------------------------------------------------ */

/* The integration's objects: one function sets them up, one frees them. */
typedef struct {
    output b;
    tstep_petsc *bridge;   /* the sequential bridge, or NULL */
    tstep_petsc_grid *grid; /* the distributed cloth, or NULL */
    Vec U;
    TS ts;
    MPI_Comm comm;
    PetscMPIInt size, rank;
} run_state;

static PetscErrorCode setup_ts(run_state *r)
{
    PetscFunctionBeginUser;
    PetscCall(TSCreate(r->comm, &r->ts));
    PetscCall(TSSetProblemType(r->ts, TS_NONLINEAR));
    PetscCall(TSSetType(r->ts, TSBEULER));
    PetscCall(TSSetTimeStep(r->ts, 0.01));
    PetscCall(TSSetMaxTime(r->ts, 1.0));
    PetscCall(TSSetExactFinalTime(r->ts, TS_EXACTFINALTIME_MATCHSTEP));
    PetscCall(TSSetFromOptions(r->ts));
    PetscFunctionReturn(0);
}

/* The system (the distributed cloth or any system on one rank) and its
 * initial state in r->U; *rc = tstep's exit code when it cannot be made. */
static PetscErrorCode setup_system(run_state *r, cli *c, int *rc)
{
    int s = 0;
    PetscFunctionBeginUser;
    if (r->grid || is_grid_cloth(c->type, &c->params)) {
        if (tstep_petsc_grid_create(r->comm, c->type, &c->params, &r->grid)) {
            s = tstep_petsc_grid_failure(r->grid) ? tstep_petsc_grid_failure(r->grid) : TS_ERR_INPUT;
        } else {
            r->b.sys = tstep_petsc_grid_system(r->grid); /* rank 0 */
            r->b.grid = r->grid;
            r->b.ny = 6 * (size_t)ts_params_int(&c->params, "nx") *
                      (size_t)ts_params_int(&c->params, "ny");
            PetscCall(tstep_petsc_grid_state(r->grid, &r->U));
        }
    } else if (!(s = ts_system_new(c->type, &c->params, &r->b.sys))) {
        r->b.ny = ts_system_ydim(r->b.sys);
        PetscCall(VecCreateSeq(PETSC_COMM_SELF, (PetscInt)r->b.ny, &r->U));
        PetscScalar *u;
        PetscCall(VecGetArray(r->U, &u));
        ts_system_get_y(r->b.sys, u);
        PetscCall(VecRestoreArray(r->U, &u));
    }
    if (s) {
        fprintf(stderr, "tstep-petsc: system '%s': %s: %s\n", c->type->name, ts_status_message(s),
                ts_error_detail());
        *rc = ts_status_exit_code(s);
    }
    PetscFunctionReturn(0);
}

/* Output, the TS functions and the monitor; *rc = 2 when refused. */
static PetscErrorCode setup_run(run_state *r, cli *c, int *rc)
{
    PetscFunctionBeginUser;
    r->b.y = r->rank == 0 ? calloc(r->b.ny, sizeof *r->b.y) : NULL;
    r->b.out = stdout;
    if (r->rank == 0 && c->outpath && !(r->b.out = fopen(c->outpath, "w"))) {
        fprintf(stderr, "tstep-petsc: --out: cannot write '%s'\n", c->outpath);
        *rc = 2;
        PetscFunctionReturn(0);
    }
    PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
    PetscErrorCode e = r->grid ? tstep_petsc_grid_attach(r->ts, r->grid)
                               : tstep_petsc_attach(r->ts, r->b.sys, &r->bridge);
    PetscPopErrorHandler();
    if (e) {
        const char *text;
        PetscErrorMessage(e, &text, NULL);
        fprintf(stderr, "tstep-petsc: cannot set up system '%s' for this TS type (%s)\n",
                c->type->name, text);
        *rc = 2;
        PetscFunctionReturn(0);
    }
    PetscCall(TSMonitorSet(r->ts, monitor, &r->b, NULL));
    PetscFunctionReturn(0);
}

/* Options left unused are an error unless -options_left no (then PETSc's
 * own report); early (before solving), only the -ts_, -snes_, -ksp_ and
 * -tstep_ options, which setup has read by then, and of those not the
 * viewers and monitors, which solvers read when they first run (the
 * preconditioner's options too may be read when it is first set up). */
static PetscErrorCode unused_options(MPI_Comm comm, int early, int *rc)
{
    PetscBool left = PETSC_TRUE, set;
    PetscInt n;
    char **names, **values;
    PetscFunctionBeginUser;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-options_left", &left, &set));
    if (set && !left)
        PetscFunctionReturn(0);
    PetscCall(PetscOptionsLeftGet(NULL, &n, &names, &values));
    for (PetscInt i = 0; i < n; i++) {
        const char *nm = names[i][0] == '-' ? names[i] + 1 : names[i];
        int later = strstr(nm, "view") || strstr(nm, "converged_reason") || strstr(nm, "monitor");
        if (early && ((strncmp(nm, "ts_", 3) && strncmp(nm, "snes_", 5) && strncmp(nm, "ksp_", 4) &&
                       strncmp(nm, "tstep_", 6)) || later))
            continue;
        PetscCall(PetscFPrintf(comm, PETSC_STDERR,
                               "tstep-petsc: option -%s%s%s was not used (misspelt, or not "
                               "for this problem; -options_left no allows it)\n",
                               nm, values[i] ? " " : "", values[i] ? values[i] : ""));
        *rc = 2;
    }
    PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
    PetscFunctionReturn(0);
}

/* A failed or diverged integration named by step and time: *rc = 1. */
static PetscErrorCode report_failure(run_state *r, PetscErrorCode perr, int *rc)
{
    TSConvergedReason reason;
    PetscInt steps;
    PetscReal t, dt;
    PetscFunctionBeginUser;
    PetscCall(TSGetConvergedReason(r->ts, &reason));
    PetscCall(TSGetStepNumber(r->ts, &steps));
    PetscCall(TSGetTime(r->ts, &t));
    PetscCall(TSGetTimeStep(r->ts, &dt));
    int failed = r->grid ? tstep_petsc_grid_failure(r->grid) : tstep_petsc_failure(r->bridge);
    if (r->b.bad_step >= 0) {
        PetscCall(PetscFPrintf(r->comm, PETSC_STDERR,
                               "tstep-petsc: the state diverged (non-finite or exploding) at "
                               "step %" PetscInt_FMT " (t = %g to %g): |state| = %g, limit %g\n",
                               r->b.bad_step, (double)r->b.bad_t0, (double)r->b.bad_t1,
                               (double)r->b.bad_norm, (double)r->b.limit));
        *rc = 1;
    } else if (perr || reason < 0) {
        const char *text = NULL;
        if (perr)
            PetscErrorMessage(perr, &text, NULL);
        PetscCall(PetscFPrintf(r->comm, PETSC_STDERR,
                               "tstep-petsc: the integration failed at step %" PetscInt_FMT
                               " (t = %g to %g): %s%s%s\n", steps + 1, (double)t,
                               (double)(t + dt), reason < 0 ? TSConvergedReasons[reason] : text,
                               failed ? ": " : "", failed ? ts_status_message(failed) : ""));
        *rc = 1;
    }
    PetscFunctionReturn(0);
}

static PetscErrorCode print_stats(run_state *r, double wall)
{
    PetscInt steps, nonlin = 0, lin = 0;
    PetscReal t;
    struct rusage ru;
    double mb, mb_max;
    PetscFunctionBeginUser;
    PetscCall(TSGetStepNumber(r->ts, &steps));
    PetscCall(TSGetTime(r->ts, &t));
    PetscCall(TSGetSNESIterations(r->ts, &nonlin));
    PetscCall(TSGetKSPIterations(r->ts, &lin));
    getrusage(RUSAGE_SELF, &ru);
    mb = (double)ru.ru_maxrss / 1024.0;
    PetscCallMPI(MPI_Allreduce(&mb, &mb_max, 1, MPI_DOUBLE, MPI_MAX, r->comm));
    PetscCall(PetscFPrintf(r->comm, PETSC_STDERR,
                           "tstep-petsc: %d rank(s), %" PetscInt_FMT " steps to t = %g in "
                           "%.3f s without output (%.4g s per step); nonlinear iterations %"
                           PetscInt_FMT ", linear iterations %" PetscInt_FMT
                           "; peak memory %.1f MB per rank (largest)\n",
                           r->size, steps, (double)t, wall, steps ? wall / steps : 0.0, nonlin,
                           lin, mb_max));
    PetscFunctionReturn(0);
}

/* Integrate; on success write the last state if the monitor did not. */
static PetscErrorCode solve(run_state *r, const cli *c, int *rc)
{
    PetscFunctionBeginUser;
    if (r->rank == 0)
        write_header(&r->b);
    double t0 = MPI_Wtime();
    PetscPushErrorHandler(PetscReturnErrorHandler, NULL); /* failures reported below */
    PetscErrorCode perr = TSSolve(r->ts, r->U);
    PetscPopErrorHandler();
    double wall = MPI_Wtime() - t0 - r->b.write_seconds; /* integration alone */
    PetscCall(report_failure(r, perr, rc));
    PetscInt steps;
    PetscReal t;
    PetscCall(TSGetStepNumber(r->ts, &steps));
    PetscCall(TSGetTime(r->ts, &t));
    if (!*rc && r->b.last_step != steps) /* the last step is always written */
        PetscCall(write_state(&r->b, t, r->U));
    if (c->stats)
        PetscCall(print_stats(r, wall));
    PetscFunctionReturn(0);
}

static PetscErrorCode teardown(run_state *r, const cli *c, int *rc)
{
    PetscFunctionBeginUser;
    if (r->rank == 0 && r->b.out && r->b.out != stdout && fclose(r->b.out)) {
        fprintf(stderr, "tstep-petsc: error writing '%s'\n", c->outpath);
        *rc = 2;
    }
    PetscCall(tstep_petsc_destroy(&r->bridge));
    PetscCall(VecDestroy(&r->U));
    PetscCall(TSDestroy(&r->ts));
    if (r->grid)
        PetscCall(tstep_petsc_grid_destroy(&r->grid));
    else
        ts_system_free(r->b.sys);
    free(r->b.y);
    PetscFunctionReturn(0);
}

static PetscErrorCode run(cli *c, int *rc)
{
    run_state r = {.b = {.every = c->every, .csv = c->csv, .last_step = -1, .bad_step = -1}};
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &r.size));
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &r.rank));
    r.b.rank = r.rank;
    int grid = is_grid_cloth(c->type, &c->params);
    if (r.size > 1 && !grid) {
        PetscCall(PetscFPrintf(PETSC_COMM_WORLD, PETSC_STDERR,
                               "tstep-petsc: system '%s' runs on one rank (%d given); only the "
                               "grid cloth runs distributed\n", c->type->name, r.size));
        *rc = 2;
        PetscFunctionReturn(0);
    }
    r.comm = grid ? PETSC_COMM_WORLD : PETSC_COMM_SELF;
    PetscCall(setup_ts(&r));
    PetscCall(setup_system(&r, c, rc));
    if (!*rc)
        PetscCall(setup_run(&r, c, rc));
    if (!*rc)
        PetscCall(unused_options(r.comm, 1, rc));
    if (!*rc)
        PetscCall(solve(&r, c, rc));
    if (!*rc)
        PetscCall(unused_options(r.comm, 0, rc));
    PetscCall(teardown(&r, c, rc));
    PetscFunctionReturn(0);
}

/* PETSc's error codes as tstep's exit codes: a bad argument (an unknown
 * type, a value out of range, ...) is a usage error, anything else a failure. */
static int exit_code(PetscErrorCode e)
{
    switch (e) {
    case 0:
        return 0;
    case PETSC_ERR_ARG_WRONG:
    case PETSC_ERR_ARG_OUTOFRANGE:
    case PETSC_ERR_ARG_UNKNOWN_TYPE:
    case PETSC_ERR_ARG_INCOMP:
    case PETSC_ERR_ARG_SIZ:
    case PETSC_ERR_ARG_TYPENOTSET:
    case PETSC_ERR_SUP:
        return 2;
    default:
        return 1;
    }
}

int main(int argc, char **argv)
{
    cli c = {.every = 1};
    int rc;
    if ((rc = parse_tstep_options(&argc, argv, &c)))
        return rc;
    PetscErrorCode e = PetscInitialize(&argc, &argv, NULL, NULL);
    if (e)
        return exit_code(e);
    if (!getenv("OMP_NUM_THREADS")) /* the ranks are the parallelism: threads on a rank's */
        ts_threads_set(1);          /* bound core only wait for each other */
    e = run(&c, &rc);
    if (e && !rc)
        rc = exit_code(e);
    if (PetscFinalize() && !rc)
        rc = 1;
    return rc;
}
