# collect/: the suite registry (pure C, always built: `kbv list`, `kbv prompt`,
# CPU tests) and the GPU stage (built only when nvcc is found).
SUITE_SRCS := collect/suite.c $(wildcard collect/problems/*.c)
SUITE_LIB  := $(BUILD)/libkbv_suite.a
TEST_LIBS  := $(SUITE_LIB) $(TEST_LIBS)
$(call objs,$(SUITE_SRCS)): CPPFLAGS += -Icollect

$(SUITE_LIB): $(call objs,$(SUITE_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
