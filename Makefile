# tstep - build, test, demo.  Everything is built under build/.
#   make          build build/tstep
#   make test     install missing dependencies, build, run the Check suite
#                 (about a minute on 2 cores; the end-to-end cases tagged
#                 "long" are make test-long, which CI runs too)
#   make check-fast  the suite without the cases tagged slow: the edit loop
#                 (about 10 s)
#   make layers   check that every include and call points down (tools/layers.sh)
#   make lint     layers, and no function over 80 lines (tools/function_length.sh)
#   make demo     install missing dependencies, build, run the main job on defaults:
#                 the sweep (order table), energy, every figure to build/plots/
#   make plots    the same figures (tools/plots.sh; data in build/plots/data/)
#   make deps     install what is missing (apt-get; sudo when not root)
#   make bench    every bench/bench_*.c: kernels, threads, output, memory against
#                 baselines measured in the same run (docs/performance.md); the
#                 linear solvers and preconditioners on the cloth (docs/solvers.md);
#                 SUNDIALS' ARKODE (libsundials-dev, installed by the deps step)
#   make assignment STEPPERS="midpoint rk4" [SYSTEMS=...] [KEEP=...] OUT=dir
#                 a hand-out with those steppers as skeletons and no answer in
#                 it (KEEP: built-ins or files to keep all the same), the
#                 solution, the grading spec (tools/assignment.sh; docs/grading.md)
#   make petsc    (optional) build/tstep-petsc: any system under PETSc's TS;
#                 make deps-petsc installs PETSc and an MPI, make test-petsc tests it
#   make install  bin/tstep, lib/libtstep.{a,so}, lib/libtstep-ext.{a,so},
#                 include/tstep/, lib/pkgconfig/tstep.pc and tstep-ext.pc,
#                 share/man/man1/tstep.1, share/tstep/*.gp under $(DESTDIR)$(PREFIX)
#   make uninstall  remove what make install put there

# CFLAGS is yours to set (e.g. CFLAGS="-O1 -g -fsanitize=address,undefined");
# the flags tstep needs are added to it in TS_CFLAGS.
CC      ?= cc
CFLAGS  ?= -O2 -g
# The core library links libc and libm only; the extension (src/ext/,
# libtstep-ext) brings SuiteSparse CHOLMOD (--linear-solver direct), LAPACK
# and ARPACK (the spectrum, the run map, amg's coarse solve), libseccomp
# (the grader's filter) and OpenMP: threads for the spring forces, products
# and vector helpers (results identical for any thread count;
# OMP_NUM_THREADS or --threads).  The core compiles with -fopenmp-simd (its
# simd loops), only the extension with $(OPENMP).
OPENMP  ?= -fopenmp
TS_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -ffp-contract=off -fPIC -Wall -Wextra -pedantic -Iinclude -Isrc -fopenmp-simd -MMD -MP $(CFLAGS)
CORE_LIBS = -lm
EXT_LIBS  = -lcholmod -llapacke -llapack -larpack -lseccomp -lm
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=

VERSION := $(shell sed -n 's/^\#define TSTEP_VERSION "\(.*\)"/\1/p' include/tstep/version.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME  := libtstep.so.$(SOMAJOR)
EXT_SONAME := libtstep-ext.so.$(SOMAJOR)

# The library: the framework (ts_* symbols) and the command-line program
# (tstep_main).  src/ holds the layers, each using only those below it
# (docs/internals.md; tools/layers.sh checks it): core, linear and springs,
# methods, then steppers/ and systems/, analysis, cli (src/ext is the second
# library, libtstep-ext, below).  The CLI's own objects
# are linked into one object whose only global symbol is tstep_main, so
# neither library exports them.  Every object is position-independent, for
# the shared library.
LAYERS   := core linear springs methods analysis
CLI_SRC  := $(filter-out src/cli/main.c src/cli/worker_main.c,$(wildcard src/cli/*.c))
CORE_SRC := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c)) \
            $(wildcard steppers/*.c) $(wildcard systems/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ  := $(CORE_OBJ) $(BUILD)/tstep_cli.o
# The extension: its own folder, above analysis (tools/layers.sh), and its
# table's symbol, which a static link names to pull it in (core/ext.h).
EXT_SRC  := $(wildcard src/ext/*.c)
EXT_OBJ  := $(EXT_SRC:%.c=$(BUILD)/%.o)
EXT_PULL := -Wl,-u,tstep_ext_entries
# a program with every feature: the extension's archive, then the core's
EXT_LINK := $(EXT_PULL) $(BUILD)/libtstep-ext.a $(BUILD)/libtstep.a $(OPENMP) $(EXT_LIBS)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

# Debian package names of the dependencies.  gnuplot: gnuplot-x11 (pngcairo,
# svg, gif, dumb, and the x11 and wxt windows of `run --live`), unless a
# gnuplot with pngcairo, gif and an interactive terminal is there already
# (gnuplot-qt; the gnuplot packages conflict, and apt replaces gnuplot-nox).
# xvfb, xauth and x11-apps (xwd): the test of `run --live` in a virtual X server.
# liblapacke-dev, liblapack-dev, libarpack2-dev: the spectrum of a linearization
# (src/analysis/spectrum.c: dense eigenvalues by LAPACK, large systems by ARPACK).
GNUPLOT_PKG = $(shell t=$$(gnuplot -e 'set terminal' 2>&1); \
                echo "$$t" | grep -q pngcairo && echo "$$t" | grep -qw gif && \
                echo "$$t" | grep -Eqw 'qt|wxt|x11' || echo gnuplot-x11)
# cmark: the test that README.md and docs/*.md render (no lost fence or heading).
DEB_PKGS = build-essential pkg-config check $(GNUPLOT_PKG) xvfb xauth x11-apps \
           libsuitesparse-dev liblapacke-dev libopenblas-dev liblapack-dev libarpack2-dev cmark \
           bubblewrap libseccomp-dev

.PHONY: all test test-long check-fast layers lint demo plots deps clean bench bench-run install uninstall FORCE petsc deps-petsc test-petsc bench-petsc assignment
all: $(BUILD)/tstep $(BUILD)/tstep-grade-worker $(BUILD)/$(SONAME) $(BUILD)/$(EXT_SONAME) \
     $(BUILD)/tstep.1

# Objects are rebuilt when the compiler or its flags change (build/.cflags).
$(BUILD)/.cflags: FORCE
	@mkdir -p $(@D)
	@echo '$(CC) $(TS_CFLAGS) $(OPENMP) $(EXT_SONAME)' | cmp -s - $@ || \
	    echo '$(CC) $(TS_CFLAGS) $(OPENMP) $(EXT_SONAME)' > $@
FORCE:

$(BUILD)/%.o: %.c $(BUILD)/.cflags
	@mkdir -p $(@D)
	$(CC) $(TS_CFLAGS) $(OBJ_CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(EXT_OBJ): OBJ_CFLAGS = $(OPENMP) -I/usr/include/suitesparse
$(BUILD)/src/core/ext.o: OBJ_CFLAGS = -DTS_EXT_SONAME='"$(EXT_SONAME)"'

$(BUILD)/tstep_cli.o: $(CLI_OBJ)
	$(LD) -r -o $@.tmp $^
	objcopy --keep-global-symbol=tstep_main $@.tmp $@ && rm -f $@.tmp

$(BUILD)/libtstep.a: $(LIB_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

# The shared library exports the ts_* and tstep_* symbols only.
$(BUILD)/$(SONAME): $(LIB_OBJ) tools/libtstep.map
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
	    -Wl,--version-script,tools/libtstep.map -o $@ $(LIB_OBJ) $(CORE_LIBS) $(LDLIBS)

$(BUILD)/libtstep-ext.a: $(EXT_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

# The extension's shared library needs the core's (one copy of the core in
# a process) and exports only its table.
$(BUILD)/$(EXT_SONAME): $(EXT_OBJ) $(BUILD)/$(SONAME) tools/libtstep-ext.map
	$(CC) $(TS_CFLAGS) $(OPENMP) $(LDFLAGS) -shared -Wl,-soname,$(EXT_SONAME) \
	    -Wl,--version-script,tools/libtstep-ext.map -o $@ $(EXT_OBJ) \
	    $(BUILD)/$(SONAME) $(EXT_LIBS) $(LDLIBS)

# The program carries the whole library and the extension and exports the
# public symbols, which plugins built without -ltstep resolve against.
$(BUILD)/tstep: $(BUILD)/src/cli/main.o $(BUILD)/libtstep.a $(BUILD)/libtstep-ext.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -rdynamic -o $@ $(BUILD)/src/cli/main.o \
	    -Wl,--whole-archive $(BUILD)/libtstep-ext.a $(BUILD)/libtstep.a -Wl,--no-whole-archive \
	    $(OPENMP) $(EXT_LIBS) $(LDLIBS)

# The grader's worker (tstep grade runs a submission in it, sandboxed): the
# library without the built-in steppers (a registry of none; the public
# layers whole, so that a plugin finds what a student may use, the analysis
# only as far as the worker needs it), so no stepper's file is within a
# submission's reach (docs/grading.md says what machinery is).  A built-in
# stepper named in a plugin is an undefined symbol there, and a link that
# pulled one in would fail here.
WORKER_API := $(filter $(foreach l,core linear springs methods,$(BUILD)/src/$(l)/%) \
                $(BUILD)/systems/%,$(CORE_OBJ))
WORKER_OBJ := $(filter-out $(BUILD)/steppers/% $(BUILD)/src/analysis/registry.o $(WORKER_API), \
                $(CORE_OBJ)) $(BUILD)/src/analysis/registry_worker.o
$(BUILD)/src/analysis/registry_worker.o: src/analysis/registry.c $(BUILD)/.cflags
	@mkdir -p $(@D)
	$(CC) $(TS_CFLAGS) -DTS_NO_BUILTIN_STEPPERS -c $< -o $@
$(BUILD)/libtstep-worker.a: $(WORKER_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
$(BUILD)/tstep-grade-worker: $(BUILD)/src/cli/worker_main.o $(WORKER_API) $(BUILD)/libtstep-worker.a \
                             $(BUILD)/libtstep-ext.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -rdynamic -o $@ $(BUILD)/src/cli/worker_main.o \
	    -Wl,--whole-archive $(BUILD)/libtstep-ext.a -Wl,--no-whole-archive $(WORKER_API) \
	    $(BUILD)/libtstep-worker.a $(OPENMP) $(EXT_LIBS) $(LDLIBS)

# The man page, from the --help texts.
$(BUILD)/tstep.1: $(BUILD)/tstep tools/manpage.sh
	sh tools/manpage.sh $(BUILD)/tstep > $@.tmp && mv $@.tmp $@

$(BUILD)/check_tstep: CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
$(TEST_OBJ): CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null) -Isrc \
                            -DTSTEP_BIN='"$(BUILD)/tstep"'
# --wrap: the test program's ts_stepper_new, system and popen skip a check
# that creates, or runs a command naming, a hand-out's skeleton stepper
# (tests/skip.c)
$(BUILD)/check_tstep: $(TEST_OBJ) $(BUILD)/libtstep.a $(BUILD)/libtstep-ext.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -Wl,--wrap=ts_stepper_new,--wrap=system,--wrap=popen -o $@ \
	    $(TEST_OBJ) $(EXT_LINK) $(shell pkg-config --libs check) $(LDLIBS)

deps:
	@sh tools/deps.sh $(DEB_PKGS)

layers: all
	@sh tools/layers.sh $(BUILD)

# the house rules CI checks: every arrow down (layers), no function over 80
# lines (tools/function_length.sh), none over 6 parameters (option structs
# instead; tools/param_count.sh)
lint: layers
	@sh tools/function_length.sh
	@sh tools/param_count.sh

# The suite's test cases carry Check tags: "long" (end-to-end runs of tens
# of seconds: make test-long, which CI runs) and "slow" (left out of
# make check-fast, the edit loop's suite).  CK_EXCLUDE_TAGS from the
# environment (e.g. install) is kept.  TSTEP_TEST_CFLAGS: the plugins suite
# links its own program with them (a sanitizer build of libtstep.a needs the
# same -fsanitize flags).
RUN_TESTS = TSTEP_TEST_CFLAGS='$(CFLAGS)' $(BUILD)/check_tstep
test: deps all $(BUILD)/check_tstep
	CK_EXCLUDE_TAGS="long $(CK_EXCLUDE_TAGS)" $(RUN_TESTS)

test-long: deps all $(BUILD)/check_tstep
	CK_INCLUDE_TAGS=long $(RUN_TESTS)

check-fast:
	@$(MAKE) --no-print-directory -j2 all $(BUILD)/check_tstep
	CK_EXCLUDE_TAGS="long slow $(CK_EXCLUDE_TAGS)" $(RUN_TESTS)

plots: deps $(BUILD)/tstep
	@sh tools/plots.sh --out $(BUILD)/plots

demo: deps $(BUILD)/tstep
	@start=$$(date +%s); sh tools/plots.sh --out $(BUILD)/plots && \
	    echo "demo: done in $$(( $$(date +%s) - start )) s; open the figures above"

# make bench: every bench program (OpenBLAS on one thread, OpenMP workers
# spinning briefly before they sleep, as the tstep program's do:
# src/cli/main.c; bench_process runs the tstep program as a user does); bench_sundials
# needs SUNDIALS (ARKODE, its serial vector and PCG), installed by the deps
# step and built when its headers are there.
BENCH_SRC := $(filter-out bench/bench_sundials.c,$(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
SUNDIALS_LIBS = -lsundials_arkode -lsundials_nvecserial -lsundials_sunlinsolpcg
HAVE_SUNDIALS := $(wildcard /usr/include/arkode/arkode_arkstep.h)
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/libtstep.a $(BUILD)/libtstep-ext.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -o $@ $< $(EXT_LINK) $(LDLIBS)
$(BUILD)/bench/bench_sundials: LDLIBS += $(SUNDIALS_LIBS)

bench:
	@sh tools/deps.sh $(DEB_PKGS) libsundials-dev
	@$(MAKE) --no-print-directory bench-run

bench-run: $(BUILD)/tstep $(BENCH_BIN) $(if $(HAVE_SUNDIALS),$(BUILD)/bench/bench_sundials)
	@rm -f $(BUILD)/bench/*.csv
	@for b in $(filter $(BUILD)/bench/%,$^); do echo "== $$b"; \
	    OPENBLAS_NUM_THREADS=1 GOMP_SPINCOUNT=10000 $$b || exit 1; done
	@echo "== summary: figure, size, value, baseline, ratio (build/bench/*.csv)"
	@for f in $(BUILD)/bench/*.csv; do \
	    if head -1 $$f | grep -q '^figure,size,value,unit,baseline,ratio,goal$$'; then tail -n +2 $$f | \
	    awk -F, '{ printf "  %-36s %-7s %10.4g %-10s %10.4g  ratio %7.3f  %s\n", $$1, $$2, $$3, $$4, $$5, $$6, $$7 }'; \
	    else echo "  $$f:"; sed 's/,/  /g; s/^/    /' $$f; fi; done

# The optional PETSc bridge (petsc/): outside the default build.
PETSC_PKGS = petsc-dev openmpi-bin
deps-petsc:
	@sh tools/deps.sh $(PETSC_PKGS)

PETSC_SRC = petsc/tstep_petsc.c petsc/bridge.c petsc/grid.c petsc/jacobian.c
$(BUILD)/tstep-petsc: $(PETSC_SRC) petsc/internal.h petsc/include/tstep/petsc.h $(BUILD)/libtstep.a $(BUILD)/libtstep-ext.a
	@pkg-config --exists petsc || { echo "make petsc: PETSc not found; run 'make deps-petsc'" >&2; exit 1; }
	$(CC) $(TS_CFLAGS) -Ipetsc/include $$(pkg-config --cflags petsc ompi-c) $(LDFLAGS) -o $@ \
	    $(PETSC_SRC) $(EXT_LINK) \
	    $$(pkg-config --libs petsc ompi-c) $(LDLIBS)

petsc: $(BUILD)/tstep-petsc

test-petsc: deps-petsc $(BUILD)/tstep $(BUILD)/tstep-petsc
	@sh petsc/test.sh

# the cloth under PETSc+GAMG on 1 and 2 ranks beside tstep's backward Euler
# (SIZES="100 300" STEPS=10 REPEATS=3 make bench-petsc)
bench-petsc: $(BUILD)/tstep $(BUILD)/tstep-petsc
	@sh petsc/bench.sh
BINDIR = $(DESTDIR)$(PREFIX)/bin
LIBDIR = $(DESTDIR)$(PREFIX)/lib
LIBEXECDIR = $(DESTDIR)$(PREFIX)/libexec/tstep
INCDIR = $(DESTDIR)$(PREFIX)/include/tstep
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
DATADIR = $(DESTDIR)$(PREFIX)/share/tstep
HEADERS = $(wildcard include/tstep/*.h)

# the two libraries, each a static archive and a shared library (libtstep,
# libtstep-ext), and their pkg-config files
LIBS_INSTALLED = libtstep libtstep-ext
PC_FILES = tstep.pc tstep-ext.pc

$(addprefix $(BUILD)/,$(PC_FILES)): $(BUILD)/%.pc: tools/%.pc.in include/tstep/version.h
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@
# the .pc files record PREFIX: rebuild them on every install.
.PHONY: $(addprefix $(BUILD)/,$(PC_FILES))
install: all $(BUILD)/libtstep.a $(BUILD)/libtstep-ext.a $(addprefix $(BUILD)/,$(PC_FILES))
	install -d $(BINDIR) $(LIBDIR)/pkgconfig $(INCDIR) $(MANDIR) $(DATADIR)
	install -m 755 $(BUILD)/tstep $(BINDIR)/tstep
	install -d $(LIBEXECDIR)
	install -m 755 $(BUILD)/tstep-grade-worker $(LIBEXECDIR)/tstep-grade-worker
	for l in $(LIBS_INSTALLED); do \
	    install -m 644 $(BUILD)/$$l.a $(LIBDIR)/$$l.a && \
	    install -m 755 $(BUILD)/$$l.so.$(SOMAJOR) $(LIBDIR)/$$l.so.$(VERSION) && \
	    ln -sf $$l.so.$(VERSION) $(LIBDIR)/$$l.so.$(SOMAJOR) && \
	    ln -sf $$l.so.$(SOMAJOR) $(LIBDIR)/$$l.so || exit 1; done
	install -m 644 $(HEADERS) $(INCDIR)
	install -m 644 $(addprefix $(BUILD)/,$(PC_FILES)) $(LIBDIR)/pkgconfig
	install -m 644 $(BUILD)/tstep.1 $(MANDIR)/tstep.1
	install -m 644 plots/*.gp $(DATADIR)

uninstall:
	rm -f $(BINDIR)/tstep $(LIBEXECDIR)/tstep-grade-worker $(addprefix $(LIBDIR)/pkgconfig/,$(PC_FILES)) \
	    $(foreach l,$(LIBS_INSTALLED),$(LIBDIR)/$(l).a $(LIBDIR)/$(l).so.$(VERSION) \
	        $(LIBDIR)/$(l).so.$(SOMAJOR) $(LIBDIR)/$(l).so) \
	    $(MANDIR)/tstep.1 $(addprefix $(INCDIR)/,$(notdir $(HEADERS))) \
	    $(addprefix $(DATADIR)/,$(notdir $(wildcard plots/*.gp)))
	-rmdir $(INCDIR) $(DATADIR) $(LIBEXECDIR) 2>/dev/null

assignment:
	@sh tools/assignment.sh --steppers "$(STEPPERS)" --systems "$(SYSTEMS)" --keep "$(KEEP)" \
	    --out "$(OUT)"

clean:
	rm -rf $(BUILD)

-include $(CORE_OBJ:.o=.d) $(EXT_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/src/cli/main.d $(BUILD)/src/cli/worker_main.d \
    $(BUILD)/src/analysis/registry_worker.d $(wildcard $(BUILD)/bench/*.d)
