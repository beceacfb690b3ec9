# tstep - build, test, demo.  Everything is built under build/.
#   make          build build/tstep
#   make test     install missing dependencies, build, run the Check suite
#   make demo     install missing dependencies, build, run the main job on defaults:
#                 the sweep (order table), energy, every figure to build/plots/
#   make plots    the same figures (tools/plots.sh; data in build/plots/data/)
#   make deps     install what is missing (apt-get; sudo when not root)
#   make bench    every bench/bench_*.c: kernels, threads, output, memory against
#                 baselines measured in the same run, and SUNDIALS' ARKODE where
#                 libsundials-dev is installed (deps step); build/bench/*.csv

# CFLAGS is yours to set (e.g. CFLAGS="-O1 -g -fsanitize=address,undefined");
# the flags tstep needs are added to it in TS_CFLAGS.
CC      ?= cc
CFLAGS  ?= -O2 -g
# OpenMP: threads for the spring forces, products and vector helpers
# (results identical for any thread count; OMP_NUM_THREADS or --threads).
OPENMP  ?= -fopenmp
TS_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -pedantic -Iinclude -MMD -MP $(OPENMP) $(CFLAGS)
LDLIBS  += -lm
BUILD   := build

LIB_SRC := $(filter-out src/main.c,$(wildcard src/*.c)) $(wildcard steppers/*.c) $(wildcard systems/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

# Debian package names of the dependencies.  gnuplot: gnuplot-x11 (pngcairo,
# svg, gif, dumb, and the x11 and wxt windows of `run --live`), unless a
# gnuplot with pngcairo, gif and an interactive terminal is there already
# (gnuplot-qt; the gnuplot packages conflict, and apt replaces gnuplot-nox).
# xvfb, xauth and x11-apps (xwd): the test of `run --live` in a virtual X server.
GNUPLOT_PKG = $(shell t=$$(gnuplot -e 'set terminal' 2>&1); \
                echo "$$t" | grep -q pngcairo && echo "$$t" | grep -qw gif && \
                echo "$$t" | grep -Eqw 'qt|wxt|x11' || echo gnuplot-x11)
DEB_PKGS = build-essential pkg-config check $(GNUPLOT_PKG) xvfb xauth x11-apps

.PHONY: all test demo plots deps clean bench bench-run
all: $(BUILD)/tstep

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(TS_CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(BUILD)/libtstep.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

$(BUILD)/tstep: $(BUILD)/src/main.o $(BUILD)/libtstep.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/check_tstep: CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
$(TEST_OBJ): CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null) -Isrc
$(BUILD)/check_tstep: $(TEST_OBJ) $(BUILD)/libtstep.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs check) $(LDLIBS)

deps:
	@sh tools/deps.sh $(DEB_PKGS)

test: deps $(BUILD)/tstep $(BUILD)/check_tstep
	$(BUILD)/check_tstep

plots: deps $(BUILD)/tstep
	@sh tools/plots.sh --out $(BUILD)/plots

demo: deps $(BUILD)/tstep
	@start=$$(date +%s); sh tools/plots.sh --out $(BUILD)/plots && \
	    echo "demo: done in $$(( $$(date +%s) - start )) s; open the figures above"

# make bench: every bench program; bench_sundials needs SUNDIALS (ARKODE,
# its serial vector and PCG), installed by the deps step and built when its
# headers are there.
BENCH_SRC := $(filter-out bench/bench_sundials.c,$(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
SUNDIALS_LIBS = -lsundials_arkode -lsundials_nvecserial -lsundials_sunlinsolpcg
HAVE_SUNDIALS := $(wildcard /usr/include/arkode/arkode_arkstep.h)
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/libtstep.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/bench/bench_sundials: LDLIBS += $(SUNDIALS_LIBS)
$(BUILD)/bench/%.o: CHECK_CFLAGS = -Isrc

bench:
	@sh tools/deps.sh $(DEB_PKGS) libsundials-dev
	@$(MAKE) --no-print-directory bench-run

bench-run: $(BUILD)/tstep $(BENCH_BIN) $(if $(HAVE_SUNDIALS),$(BUILD)/bench/bench_sundials)
	@for b in $(filter $(BUILD)/bench/%,$^); do echo "== $$b"; $$b || exit 1; done
	@echo "== summary: figure, size, value, baseline, ratio (build/bench/*.csv)"
	@for f in $(BUILD)/bench/*.csv; do tail -n +2 $$f | \
	    awk -F, '{ printf "  %-36s %-7s %10.4g %-10s %10.4g  ratio %7.3f  %s\n", $$1, $$2, $$3, $$4, $$5, $$6, $$7 }'; done

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/src/main.d $(wildcard $(BUILD)/bench/*.d)
