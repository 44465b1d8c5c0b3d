# tests/unit/test_<stage>_*.c: one cmocka program each, linked with only the
# libraries of the stage it tests (its name says which: test_analyze_*,
# test_collect_*, test_common*, test_prompt_*, test_render_*, test_suite_*),
# so that a test of the suite registry needs neither Cairo nor libharu and a
# change in render relinks only render's tests.  tests/run.sh runs them
# (TAP) and the CLI scripts in tests/cli/; one alone: make build/tests/NAME
# && build/tests/NAME (README, "Tests").
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

TEST_LIBS_analyze := $(ANALYZE_LIB) $(COMMON_LIB)
TEST_LIBS_collect := $(COLLECTHOST_LIB) $(SUITE_LIB) $(COMMON_LIB)
TEST_LIBS_common  := $(COMMON_LIB)
TEST_LIBS_prompt  := $(PROMPT_LIB) $(SUITE_LIB) $(COMMON_LIB)
TEST_LIBS_render  := $(RENDER_LIB) $(COMMON_LIB)
TEST_LIBS_suite   := $(SUITE_LIB) $(COMMON_LIB)
TEST_LDLIBS_analyze := -pthread
TEST_LDLIBS_collect := -pthread
TEST_LDLIBS_render  := $(CAIRO_LIBS) $(HPDF_LIBS) $(FT_LIBS) -pthread

# test_analyze_stats -> analyze, test_common -> common.
test_stage = $(word 2,$(subst _, ,$(1)))

.PHONY: tests
tests: $(TEST_BINS)

define test_link
$(BUILD)/tests/$(1): $(OBJ)/tests/unit/$(1).o $(TEST_LIBS_$(call test_stage,$(1)))
	$$(call msg,LINK,$$@)
	$$(Q)mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(CFLAGS) -o $$@ $$< $(TEST_LIBS_$(call test_stage,$(1))) $(TEST_LDLIBS_$(call test_stage,$(1))) $$(LDLIBS_COMMON) -lcmocka
endef
$(foreach t,$(basename $(notdir $(TEST_SRCS))),$(eval $(call test_link,$(t))))
