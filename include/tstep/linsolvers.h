/* tstep/linsolvers.h - the built-in linear solvers and preconditioners, one
 * line each (tstep/linsolve.h declares them, src/linear/linsolve.c makes the
 * registries from them, in this order: the first preconditioner is the
 * default).  To add one, write src/linear/precond_NAME.c (or
 * linsolve_NAME.c) defining the type object and add its line here; every
 * command's --precond / --linear-solver, --help and `tstep list` follow. */
TS_LINSOLVE(ts_linsolve_cg)
TS_LINSOLVE(ts_linsolve_direct)
TS_PRECOND(ts_precond_jacobi)
TS_PRECOND(ts_precond_block_jacobi)
TS_PRECOND(ts_precond_ic0)
TS_PRECOND(ts_precond_amg)
