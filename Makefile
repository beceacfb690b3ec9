# tstep - build, test, demo.  Everything is built under build/.
#   make          build build/tstep
#   make test     install missing dependencies, build, run the Check suite
#   make demo     install missing dependencies, build, run the main job on defaults:
#                 the sweep (order table), energy, every figure to build/plots/
#   make plots    the same figures (tools/plots.sh; data in build/plots/data/)
#   make deps     install what is missing (apt-get; sudo when not root)
#   make bench    cloth CG matvec throughput against a STREAM triad on this machine

# CFLAGS is yours to set (e.g. CFLAGS="-O1 -g -fsanitize=address,undefined");
# the flags tstep needs are added to it in TS_CFLAGS.
CC      ?= cc
CFLAGS  ?= -O2 -g
TS_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -pedantic -Iinclude -MMD -MP $(CFLAGS)
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
# cmark: the test that README.md and docs/*.md render (no lost fence or heading).
DEB_PKGS = build-essential pkg-config check $(GNUPLOT_PKG) xvfb xauth x11-apps cmark

.PHONY: all test demo plots deps clean bench
all: $(BUILD)/tstep

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(TS_CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(BUILD)/libtstep.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

$(BUILD)/tstep: $(BUILD)/src/main.o $(BUILD)/libtstep.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/check_tstep: CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
$(TEST_OBJ): CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null) -Isrc \
                            -DTSTEP_BIN='"$(BUILD)/tstep"'
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

$(BUILD)/bench_matvec: $(BUILD)/bench/bench_matvec.o $(BUILD)/libtstep.a
	$(CC) $(TS_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench: $(BUILD)/bench_matvec
	$(BUILD)/bench_matvec

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/src/main.d $(BUILD)/bench/bench_matvec.d
