# tstep - build, test, demo.  Everything is built under build/.
#   make          build build/tstep
#   make test     install missing dependencies, build, run the Check suite
#   make demo     install missing dependencies, build, run the main job on defaults
#   make deps     install what is missing (apt-get; sudo when not root)
#   make bench    cloth CG matvec throughput against a STREAM triad on this machine

CC      ?= cc
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -pedantic -Iinclude -MMD -MP
LDLIBS  += -lm
BUILD   := build

LIB_SRC := $(filter-out src/main.c,$(wildcard src/*.c)) $(wildcard steppers/*.c) $(wildcard systems/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

# Debian package names of the dependencies, and the commands that prove them.
DEB_PKGS := build-essential pkg-config check

.PHONY: all test demo deps clean bench
all: $(BUILD)/tstep

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(BUILD)/libtstep.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

$(BUILD)/tstep: $(BUILD)/src/main.o $(BUILD)/libtstep.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/check_tstep: CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
$(TEST_OBJ): CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null) -Isrc
$(BUILD)/check_tstep: $(TEST_OBJ) $(BUILD)/libtstep.a
	$(CC) $(CFLAGS) -o $@ $^ $(shell pkg-config --libs check) $(LDLIBS)

deps:
	@sh tools/deps.sh $(DEB_PKGS)

test: deps $(BUILD)/tstep $(BUILD)/check_tstep
	$(BUILD)/check_tstep

demo: deps $(BUILD)/tstep
	$(BUILD)/tstep sweep --system test1d --stepper all --dt-min 1e-3 --dt-max 1e-1 \
	    --levels 7 --t-end 1 --format csv --out $(BUILD)/sweep-test1d.csv
	@echo "trajectory data: $(BUILD)/sweep-test1d.csv"

$(BUILD)/bench_matvec: $(BUILD)/bench/bench_matvec.o $(BUILD)/libtstep.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

bench: $(BUILD)/bench_matvec
	$(BUILD)/bench_matvec

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/src/main.d $(BUILD)/bench/bench_matvec.d
