# tests/fuzz/fuzz.mk: libFuzzer harnesses for every reader of untrusted files
# (journal, manifest, analysis.json, report and style templates, set.json,
# prompt template, SHA256SUMS, the --resume journal, merge's shards,
# parity.json).
#
#   make fuzz      build them into $(BUILD)/fuzz/ with clang, ASan and UBSan
#   make fuzz-ci   run each for its share of FUZZ_SECONDS (100 in all); fails
#                  on a crash, a leak, undefined behaviour or a timeout
#
# The sources are compiled here with clang and the sanitizers (not the
# gcc-built libraries), each object once into $(BUILD)/fuzz/obj/.  A run
# starts from the seeds in tests/fuzz/corpus/<harness>/ and writes what it
# finds to $(BUILD)/fuzz/work/<harness>/, so that the committed corpus only
# changes by hand; a crashing input lands in $(BUILD)/fuzz/artifacts/.

FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 -g -O1 $(FUZZ_SAN) -D_GNU_SOURCE -Iinclude -Icommon -Itests/fuzz \
                -iquote analyze -iquote dispatch -iquote render -iquote collect/suite -iquote collect/suite/problems -iquote collect/supervise $(DEPS_INC) $(CAIRO_CFLAGS) $(FT_CFLAGS) \
                -Wall -Wextra -Wno-unused-parameter
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_OBJ     := $(FUZZ_DIR)/obj
FUZZ_SECONDS ?= 100
FUZZ_LDLIBS  := $(LDLIBS_COMMON) -pthread -ldl

FUZZ_COMMON  := $(wildcard common/*.c)
FUZZ_ANALYZE := $(filter-out analyze/main.c,$(wildcard analyze/*.c))
FUZZ_RENDER  := render/model.c render/tmpl.c render/style.c render/canvas.c render/fontm.c
FUZZ_SUITE   := collect/suite/suite.c collect/suite/suite_host.c collect/suite/bf16path.c $(wildcard collect/suite/problems/*.c)

# Each harness and the sources it needs.
FUZZ_NAMES   := journal journal_par manifest analysis render template style setjson prompt sums resume merge parity
FUZZ_SRC_journal  := $(FUZZ_ANALYZE) $(FUZZ_COMMON)
FUZZ_SRC_journal_par := $(FUZZ_ANALYZE) $(FUZZ_COMMON)
FUZZ_SRC_manifest := $(FUZZ_ANALYZE) $(FUZZ_COMMON)
FUZZ_SRC_analysis := $(FUZZ_RENDER) $(FUZZ_COMMON)
FUZZ_SRC_template := $(FUZZ_RENDER) $(FUZZ_COMMON)
FUZZ_SRC_render   := $(filter-out render/main.c,$(wildcard render/*.c)) $(FUZZ_COMMON)
FUZZ_SRC_style    := $(FUZZ_RENDER) $(FUZZ_COMMON)
FUZZ_SRC_setjson  := collect/supervise/plan.c $(FUZZ_SUITE) $(FUZZ_COMMON)
FUZZ_SRC_prompt   := collect/suite/prompt.c $(FUZZ_SUITE) $(FUZZ_COMMON)
FUZZ_SRC_sums     := $(FUZZ_COMMON)
FUZZ_SRC_resume   := collect/supervise/resume.c collect/supervise/plan.c $(FUZZ_SUITE) $(FUZZ_COMMON)
FUZZ_SRC_merge    := dispatch/merge.c $(FUZZ_COMMON)
FUZZ_SRC_parity   := $(FUZZ_ANALYZE) $(FUZZ_COMMON)
FUZZ_LIBS_analysis := $(FT_LIBS)
FUZZ_LIBS_render   := $(CAIRO_LIBS) $(HPDF_LIBS) $(FT_LIBS)
FUZZ_LIBS_template := $(FT_LIBS)
FUZZ_LIBS_style    := $(FT_LIBS)

FUZZ_BINS := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-ci fuzz-check-cc
fuzz: $(FUZZ_BINS)

fuzz-check-cc:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { echo "kbv: fuzz: $(FUZZ_CC) not found (apt-get install clang)" >&2; exit 2; }

$(FUZZ_OBJ)/%.o: %.c | fuzz-check-cc
	$(call msg,FUZZCC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

# The suite's tables are static data, not a reader, and their initialisers
# use a constant sqrt that gcc folds and clang rejects; they are compiled
# with $(CC), without instrumentation.
FUZZ_GCC_OBJ := $(FUZZ_DIR)/obj-cc
$(FUZZ_GCC_OBJ)/%.o: %.c
	$(call msg,CC,$< [fuzz])
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SUITE_INC) -MMD -MP -c $< -o $@
fuzz_objs = $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(filter-out $(FUZZ_SUITE),$(1))) \
            $(patsubst %.c,$(FUZZ_GCC_OBJ)/%.o,$(filter $(FUZZ_SUITE),$(1)))

define fuzz_link
$(FUZZ_DIR)/fuzz_$(1): $(call fuzz_objs,tests/fuzz/fuzz_$(1).c $(FUZZ_SRC_$(1)))
	$$(call msg,FUZZLD,$$@)
	$$(Q)$(FUZZ_CC) $(FUZZ_SAN) -g -o $$@ $$^ $(FUZZ_LIBS_$(1)) $(FUZZ_LDLIBS)
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call fuzz_link,$(n))))

-include $(shell find $(FUZZ_OBJ) $(FUZZ_GCC_OBJ) -name '*.d' 2>/dev/null)

# Each harness gets an equal share of FUZZ_SECONDS.  libFuzzer exits
# non-zero on a crash, a leak, an UBSan report or a timeout (-timeout, per
# input), and make stops there; the artifact's path is in its output.
FUZZ_EACH = $(shell echo $$(( $(FUZZ_SECONDS) / $(words $(FUZZ_NAMES)) )))
fuzz-ci: fuzz
	$(Q)mkdir -p $(FUZZ_DIR)/artifacts
	$(Q)set -e; for n in $(FUZZ_NAMES); do \
	    mkdir -p $(FUZZ_DIR)/work/$$n; \
	    printf '  %-7s %s (%ss)\n' FUZZ fuzz_$$n $(FUZZ_EACH); \
	    log=$(FUZZ_DIR)/work/$$n.log; \
	    if ! $(FUZZ_DIR)/fuzz_$$n -max_total_time=$(FUZZ_EACH) -timeout=10 -rss_limit_mb=2048 \
	        -max_len=65536 -dict=tests/fuzz/json.dict -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_DIR)/artifacts/fuzz_$$n- \
	        $(FUZZ_DIR)/work/$$n tests/fuzz/corpus/fuzz_$$n >$$log 2>&1; then \
	        tail -60 $$log >&2; echo "kbv: fuzz: fuzz_$$n failed (log: $$log)" >&2; exit 1; fi; \
	    grep -E '^stat::number_of_executed_units|^#[0-9]+ *DONE' $$log | tail -1 | sed 's/^/          /'; \
	done
