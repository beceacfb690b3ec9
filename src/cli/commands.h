/* The commands, one line each: CLI_COMMAND(name as typed, its function
 * cmd_NAME in src/cli/cmd_*.c, one-line summary).  tstep_main.c makes the
 * command table and the declarations from it; `tstep --help` lists them in
 * this order.  To add a command, write src/cli/cmd_NAME.c and add its line. */
CLI_COMMAND("list", cmd_list, "list steppers and systems with their parameters")
CLI_COMMAND("run", cmd_run, "integrate a system and write its trajectory")
CLI_COMMAND("sweep", cmd_sweep, "error at t_end against step size; observed orders")
CLI_COMMAND("check-system", cmd_check, "Jacobian products against finite differences, Taylor test")
CLI_COMMAND("stability", cmd_stability, "critical step size per stepper, measured and predicted")
CLI_COMMAND("amplification", cmd_amplification, "one-step amplification factor on the test equation")
CLI_COMMAND("region", cmd_region, "stability regions |R(z)| on a grid of the complex plane")
CLI_COMMAND("phase", cmd_phase, "phase and amplitude per step on the undamped oscillator")
CLI_COMMAND("grade", cmd_grade, "judge a stepper against expected order, stability, energy, contract")
