/* tstep-petsc: any tstep system integrated by PETSc's TS: the program
 * around tstep/petsc.h (petsc/bridge.c), which says what TS sees.  tstep's
 * own options choose the system and the output, which is tstep run's format
 * (t, x.., v.., energy), so the gnuplot scripts draw it; every other option
 * goes to PETSc.  The grid cloth runs distributed (tstep_petsc_grid_*);
 * any other system on one rank (with more it says so and exits 2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/petsc.h"

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
} output;

static const char usage[] =
    "Usage: tstep-petsc --system S [--param key=value]... [--out FILE]\n"
    "                   [--format dat|csv] [--every N] [PETSc options]\n"
    "\n"
    "Integrates a tstep system with PETSc's TS.  The system's first-order view\n"
    "Y' = F(t, Y) is the right-hand side; implicit TS types see the implicit\n"
    "form Y' - F(t, Y) = 0 with a matrix-free Jacobian from the system's\n"
    "Jacobian products (pinned entries held).\n"
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
    "  -snes_rtol, -snes_atol, -ksp_type, -ksp_rtol, -pc_type none|jacobi\n"
    "  -ts_monitor  -snes_monitor  -ksp_monitor  -log_view\n"
    "Implicit types: the Jacobian is matrix-free, so the default preconditioner is\n"
    "none and GMRES uses modified Gram-Schmidt (-pc_type jacobi where the system\n"
    "gives its Jacobian's diagonal).\n"
    "The grid cloth (no mesh=) runs distributed over the MPI ranks (mpiexec -n N)\n"
    "on a 2-D DMDA; every other system runs on one rank.  Post-step projections\n"
    "(collider, strain limit) are applied on one rank and refused distributed.\n"
    "Exit status: 0 success, 1 the integration failed,\n"
    "2 usage error.\n";

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

static PetscErrorCode monitor(TS ts, PetscInt step, PetscReal t, Vec U, void *ctx)
{
    output *b = ctx;
    PetscReal tmax;
    PetscFunctionBeginUser;
    PetscCall(TSGetMaxTime(ts, &tmax));
    int last = t >= tmax - 1e-12 * fmax(1.0, fabs(tmax));
    if (step % b->every == 0 || last) {
        PetscCall(write_state(b, t, U));
        b->last_step = step;
    }
    PetscFunctionReturn(0);
}

/* --- tstep's options ------------------------------------------------------------ */

/* Take tstep's own options out of argv (PETSc sees the rest). */
static int parse_tstep_options(int *argc, char **argv, const ts_system_type **type,
                               ts_params *params, const char **out, int *csv, long *every,
                               int *stats)
{
    int k = 1;
    const char *system = NULL;
    static char *pairs[256];
    int npairs = 0;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            exit(0);
        }
        if (strcmp(a, "--stats") == 0) {
            *stats = 1;
            continue;
        }
        int takes = strcmp(a, "--system") == 0 || strcmp(a, "--param") == 0 ||
                    strcmp(a, "--out") == 0 || strcmp(a, "--format") == 0 ||
                    strcmp(a, "--every") == 0;
        if (!takes) {
            if (strncmp(a, "--", 2) == 0) {
                fprintf(stderr, "tstep-petsc: unknown option '%s' (tstep options: --system, "
                                "--param, --out, --format, --every, --stats; PETSc options start with "
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
            *out = val;
        } else if (strcmp(a, "--format") == 0) {
            if (strcmp(val, "csv") && strcmp(val, "dat")) {
                fprintf(stderr, "tstep-petsc: --format: '%s' is not dat or csv\n", val);
                return 2;
            }
            *csv = strcmp(val, "csv") == 0;
        } else {
            char *end;
            *every = strtol(val, &end, 10);
            if (*end || end == val || *every < 1) {
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
    if (!(*type = ts_system_find(system))) {
        fprintf(stderr, "tstep-petsc: --system: unknown system '%s' (valid:", system);
        for (size_t i = 0; ts_system_at(i); i++)
            fprintf(stderr, " %s", ts_system_at(i)->name);
        fprintf(stderr, ")\n");
        return 2;
    }
    ts_params_init(params, (*type)->params);
    for (int i = 0; i < npairs; i++)
        if (ts_params_set_pair(params, pairs[i])) {
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

int main(int argc, char **argv)
{
    const ts_system_type *type;
    ts_params params;
    const char *outpath = NULL;
    int csv = 0, stats = 0, rc;
    long every = 1;
    if ((rc = parse_tstep_options(&argc, argv, &type, &params, &outpath, &csv, &every, &stats)))
        return rc;

    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscMPIInt size, rank;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    int grid = is_grid_cloth(type, &params);
    if (size > 1 && !grid) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                              "tstep-petsc: system '%s' runs on one rank (%d given); only the "
                              "grid cloth runs distributed\n",
                              type->name, size));
        PetscCall(PetscFinalize());
        return 2;
    }

    output b = {.every = every, .csv = csv, .last_step = -1, .rank = rank};
    tstep_petsc *bridge_ctx = NULL;
    tstep_petsc_grid *g = NULL;
    Vec U;
    TS ts;
    MPI_Comm comm = grid ? PETSC_COMM_WORLD : PETSC_COMM_SELF;
    PetscCall(TSCreate(comm, &ts));
    PetscCall(TSSetProblemType(ts, TS_NONLINEAR));
    PetscCall(TSSetType(ts, TSBEULER));
    PetscCall(TSSetTimeStep(ts, 0.01));
    PetscCall(TSSetMaxTime(ts, 1.0));
    PetscCall(TSSetExactFinalTime(ts, TS_EXACTFINALTIME_MATCHSTEP));
    PetscCall(TSSetFromOptions(ts));

    int s = 0;
    if (grid) {
        if (tstep_petsc_grid_create(comm, type, &params, &g)) {
            s = tstep_petsc_grid_failure(g) ? tstep_petsc_grid_failure(g) : TS_ERR_INPUT;
        } else {
            b.sys = tstep_petsc_grid_system(g); /* rank 0 */
            b.grid = g;
            b.ny = 6 * (size_t)ts_params_int(&params, "nx") * (size_t)ts_params_int(&params, "ny");
            PetscCall(tstep_petsc_grid_state(g, &U));
        }
    } else if (!(s = ts_system_new(type, &params, &b.sys))) {
        b.ny = ts_system_ydim(b.sys);
        PetscCall(VecCreateSeq(PETSC_COMM_SELF, (PetscInt)b.ny, &U));
        PetscScalar *u;
        PetscCall(VecGetArray(U, &u));
        ts_system_get_y(b.sys, u);
        PetscCall(VecRestoreArray(U, &u));
    }
    if (s) {
        fprintf(stderr, "tstep-petsc: system '%s': %s: %s\n", type->name, ts_status_message(s),
                ts_error_detail());
        PetscCall(PetscFinalize());
        return ts_status_exit_code(s);
    }
    b.y = rank == 0 ? calloc(b.ny, sizeof *b.y) : NULL;
    b.out = stdout;
    if (rank == 0 && outpath && !(b.out = fopen(outpath, "w"))) {
        fprintf(stderr, "tstep-petsc: --out: cannot write '%s'\n", outpath);
        PetscCall(PetscFinalize());
        return 2;
    }
    if ((grid ? tstep_petsc_grid_attach(ts, g) : tstep_petsc_attach(ts, b.sys, &bridge_ctx))) {
        fprintf(stderr, "tstep-petsc: cannot set up system '%s' for this TS type\n", type->name);
        PetscCall(PetscFinalize());
        return 2;
    }
    PetscCall(TSMonitorSet(ts, monitor, &b, NULL));

    if (rank == 0)
        write_header(&b);
    double t0 = MPI_Wtime();
    PetscErrorCode perr = TSSolve(ts, U);
    double wall = MPI_Wtime() - t0 - b.write_seconds; /* integration alone */
    TSConvergedReason reason;
    PetscCall(TSGetConvergedReason(ts, &reason));
    rc = 0;
    int failed = grid ? tstep_petsc_grid_failure(g) : tstep_petsc_failure(bridge_ctx);
    PetscInt steps;
    PetscReal t;
    PetscCall(TSGetStepNumber(ts, &steps));
    PetscCall(TSGetTime(ts, &t));
    if (perr || reason < 0) {
        fprintf(stderr, "tstep-petsc: TS stopped: %s%s%s\n",
                perr ? "error in a callback" : TSConvergedReasons[reason], failed ? ": " : "",
                failed ? ts_status_message(failed) : "");
        rc = 1;
    } else if (b.last_step != steps) { /* the last step is always written */
        PetscCall(write_state(&b, t, U));
    }
    if (stats) {
        PetscInt nonlin = 0, lin = 0;
        PetscCall(TSGetSNESIterations(ts, &nonlin));
        PetscCall(TSGetKSPIterations(ts, &lin));
        PetscCall(PetscFPrintf(comm, PETSC_STDERR,
                              "tstep-petsc: %d rank(s), %" PetscInt_FMT " steps to t = %g in "
                              "%.3f s without output (%.4g s per step); nonlinear iterations %" PetscInt_FMT
                              ", linear iterations %" PetscInt_FMT "\n",
                              size, steps, (double)t, wall, steps ? wall / steps : 0.0, nonlin,
                              lin));
    }
    if (rank == 0 && b.out != stdout && fclose(b.out)) {
        fprintf(stderr, "tstep-petsc: error writing '%s'\n", outpath);
        rc = 2;
    }
    PetscCall(tstep_petsc_destroy(&bridge_ctx));
    PetscCall(VecDestroy(&U));
    PetscCall(TSDestroy(&ts));
    if (grid)
        PetscCall(tstep_petsc_grid_destroy(&g));
    else
        ts_system_free(b.sys);
    free(b.y);
    PetscCall(PetscFinalize());
    return rc;
}
