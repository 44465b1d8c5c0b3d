# kbv - verified benchmarks of candidate CUDA kernels.
#
#   make            build analyze and render (and collect when nvcc is found)
#   make test       CPU tests (installs missing packages first when root)
#   make test-gpu   tests that need a CUDA GPU (tests/gpu/)
#   make report     collect on a GPU, else re-render the newest snapshot
#                   (then it builds only kbv, kbv-analyze and kbv-render)
#   make bench      time analyze and render (and collect on a GPU)
#   make deps       install the Debian packages kbv needs (root), or print the line
#   make install    PREFIX=/usr/local DESTDIR=
#
# Quiet unless V=1.  Each module adds its sources and programs in its own
# module.mk, so that the stages can grow without touching this file.

BUILD    ?= build
OBJ      := $(BUILD)/obj
PREFIX   ?= /usr/local
DESTDIR  ?=
NVCC     ?= nvcc
# A folder holding unpacked Debian packages (usr/include, usr/lib/...) for
# machines without a package registry, such as the GPU host (see README).
DEPS_ROOT ?=

V ?= 0
ifeq ($(V),1)
Q :=
msg = @:
else
Q := @
msg = @printf '  %-7s %s\n' $(1) $(2);
endif

HAVE_NVCC := $(shell command -v $(NVCC) >/dev/null 2>&1 && echo 1)
CUDA_HOME ?= $(patsubst %/bin/,%,$(dir $(shell command -v $(NVCC) 2>/dev/null)))
# A copy of the tree without .git (a GPU host) is told its commit by KBV_GIT_COMMIT.
ifneq ($(KBV_GIT_COMMIT),)
GIT_COMMIT := $(KBV_GIT_COMMIT)
GIT_DIRTY  :=
else
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
GIT_DIRTY  := $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo -dirty)
endif

DEPS_INC  := $(if $(DEPS_ROOT),-I$(DEPS_ROOT)/usr/include)
comma := ,
# DT_RPATH (not RUNPATH) so that the libraries' own dependencies (cairo's
# pixman, freetype, ...) are found in DEPS_ROOT too.
DEPS_LIB  := $(if $(DEPS_ROOT),-L$(DEPS_ROOT)/usr/lib/x86_64-linux-gnu -Wl$(comma)--disable-new-dtags$(comma)-rpath$(comma)$(abspath $(DEPS_ROOT))/usr/lib/x86_64-linux-gnu)

# Messages and paths are cut to their buffers on purpose (cli_path checks
# where a cut would matter), so format-truncation warnings are noise.
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wno-format-truncation
CFLAGS   ?= -O2 -g
CPPFLAGS += -Iinclude -Icommon $(DEPS_INC) -D_GNU_SOURCE
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(CPPFLAGS)
LDLIBS_COMMON := $(DEPS_LIB) -lcjson -lcrypto -lz -lm

ifeq ($(DEPS_ROOT),)
CAIRO_CFLAGS := $(shell pkg-config --cflags cairo 2>/dev/null)
CAIRO_LIBS   := $(shell pkg-config --libs cairo 2>/dev/null || echo -lcairo)
else
CAIRO_CFLAGS := $(addprefix -I$(DEPS_ROOT)/usr/include/,cairo freetype2 libpng16 pixman-1)
CAIRO_LIBS   := $(DEPS_LIB) -lcairo
endif
HPDF_LIBS    := -lhpdf

NVCCFLAGS ?= -O3 -std=c++17 -lineinfo
NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
ALL_NVCCFLAGS = $(NVCCFLAGS) $(NVCC_ARCH) -Iinclude -Icommon $(DEPS_INC) -Xcompiler -fPIC,-Wall,-Wextra,-Werror

objs = $(patsubst %.c,$(OBJ)/%.o,$(filter %.c,$(1))) $(patsubst %.cu,$(OBJ)/%.cu.o,$(filter %.cu,$(1)))

PROGRAMS :=

.PHONY: all test test-asan test-gpu report report-tools snapshot deps deps-check deps-check-build install clean bench
all:

include common/module.mk
include dispatch/module.mk
include analyze/module.mk
include render/module.mk
include collect/suite/module.mk
include collect/baselines/module.mk
include collect/supervise/module.mk
include collect/worker/module.mk
include tests/module.mk
include tests/fuzz/fuzz.mk

all: $(PROGRAMS)
ifeq ($(HAVE_NVCC),1)
	@echo "kbv: built analyze, render, collect (nvcc: $(NVCC)) into $(BUILD)/"
else
	@echo "kbv: built analyze and render into $(BUILD)/; collect skipped (no nvcc found)"
endif

$(OBJ)/%.o: %.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(EXTRA_CFLAGS_$(subst /,_,$(basename $<))) -MMD -MP -c $< -o $@

$(OBJ)/%.cu.o: %.cu
	$(call msg,NVCC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(ALL_NVCCFLAGS) -MMD -MP -c $< -o $@

# cli.c carries the commit the harness was built from.  The commit is kept
# in a file rewritten only when it changes, so that cli.o is rebuilt when
# KBV_GIT_COMMIT names another commit (a GPU host keeps its build folder
# between copies of the tree; a stale cli.o named the wrong commit).
COMMIT_FILE := $(OBJ)/commit.txt
$(shell mkdir -p $(OBJ) && { echo '$(GIT_COMMIT)$(GIT_DIRTY)' | cmp -s - $(COMMIT_FILE) || echo '$(GIT_COMMIT)$(GIT_DIRTY)' >$(COMMIT_FILE); })
$(OBJ)/common/cli.o: EXTRA_CFLAGS_common_cli := -DKBV_GIT_COMMIT=\"$(GIT_COMMIT)$(GIT_DIRTY)\"
$(OBJ)/common/cli.o: $(COMMIT_FILE) $(wildcard .git/HEAD .git/index)

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

# --- dependencies -------------------------------------------------------------
deps:
	$(Q)scripts/deps.sh install

deps-check:
	$(Q)scripts/deps.sh check test || scripts/deps.sh install

deps-check-build:
	$(Q)DEPS_ROOT=$(DEPS_ROOT) scripts/deps.sh check build || scripts/deps.sh install

# --- tests --------------------------------------------------------------------
test: deps-check
	$(Q)$(MAKE) --no-print-directory all tests
	$(Q)tests/run.sh $(BUILD)

# The unit tests again, built with AddressSanitizer and UBSan (CI runs it).
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
test-asan: deps-check
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)-asan CFLAGS="$(SAN_FLAGS)" tests
	$(Q)KBV_TEST_UNIT_ONLY=1 ASAN_OPTIONS=detect_leaks=1 tests/run.sh $(BUILD)-asan

test-gpu: all
	$(Q)tests/gpu/run.sh $(BUILD)

# --- the pipeline -------------------------------------------------------------
# Without a visible GPU (or with KBV_NO_GPU=1) report.sh re-renders the
# newest snapshot, which needs only the dispatcher, analyze and render: the
# CUDA code is not compiled then (it took most of a first run's time).
GPU_VISIBLE_CMD := [ "$${KBV_NO_GPU:-0}" != 1 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
REPORT_TOOLS := $(BUILD)/kbv $(BUILD)/kbv-analyze $(BUILD)/kbv-render
report-tools: $(REPORT_TOOLS)

report: deps-check-build
	$(Q)if $(GPU_VISIBLE_CMD); then $(MAKE) --no-print-directory all; \
	    else $(MAKE) --no-print-directory report-tools; fi
	$(Q)scripts/report.sh $(BUILD)

# Archive a run as the current snapshot: make snapshot RUN=runs/<id>
snapshot:
	$(Q)test -n "$(RUN)" || { echo "usage: make snapshot RUN=runs/<run-id>" >&2; exit 2; }
	$(Q)scripts/snapshot.sh $(RUN) $(BUILD)

bench: $(REPORT_TOOLS)
	$(Q)if $(GPU_VISIBLE_CMD); then $(MAKE) --no-print-directory all; fi
	$(Q)scripts/bench.sh $(BUILD)

install: all
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/kbv
	$(Q)install -m 755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/
	$(Q)install -m 644 include/kbv.h $(DESTDIR)$(PREFIX)/include/
	$(Q)cp -R templates $(DESTDIR)$(PREFIX)/share/kbv/

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)
