# analyze/: statistics, classes, memory trade-off.  Pure C, no CUDA.
ANALYZE_SRCS := $(filter-out analyze/main.c,$(wildcard analyze/*.c))
ANALYZE_LIB  := $(BUILD)/libkbv_analyze.a
PROGRAMS     += $(BUILD)/kbv-analyze

$(ANALYZE_LIB): $(call objs,$(ANALYZE_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/kbv-analyze: $(OBJ)/analyze/main.o $(ANALYZE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)

# analyze's unit tests include the module's own headers.
$(foreach t,$(basename $(notdir $(wildcard tests/unit/test_analyze_*.c))),$(eval EXTRA_CFLAGS_tests_unit_$(t) := -Ianalyze))
