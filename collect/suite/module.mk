# collect/suite/: the suite registry (the problems, their shapes, inputs,
# FLOPs and minimum bytes; problems/ holds the spec tables, one file per
# family), the prompt renderer and the programs kbv-list and kbv-prompt.
# Pure C over common/, always built: `kbv list`, `kbv prompt` and the CPU
# tests need no CUDA.  Depends on common/ and include/ only.
SUITE_INC  := -Icollect/suite -Icollect/suite/problems
SUITE_SRCS := collect/suite/suite.c collect/suite/suite_host.c collect/suite/bf16path.c collect/suite/convpin.c $(wildcard collect/suite/problems/*.c)
SUITE_LIB  := $(BUILD)/libkbv_suite.a
$(call objs,$(SUITE_SRCS)): CPPFLAGS += $(SUITE_INC)

$(SUITE_LIB): $(call objs,$(SUITE_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# kbv list [--json].
PROGRAMS += $(BUILD)/kbv-list
$(OBJ)/collect/suite/list_main.o: CPPFLAGS += $(SUITE_INC)
$(BUILD)/kbv-list: $(OBJ)/collect/suite/list_main.o $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)

# kbv prompt PROBLEM: the text a model needs to write a candidate.  The
# renderer is a library so that unit tests (tests/unit/test_prompt_*.c)
# link it.
PROMPT_SRCS := collect/suite/prompt.c
PROMPT_LIB  := $(BUILD)/libkbv_prompt.a
$(call objs,$(PROMPT_SRCS) collect/suite/prompt_main.c): CPPFLAGS += $(SUITE_INC)

$(PROMPT_LIB): $(call objs,$(PROMPT_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

PROGRAMS += $(BUILD)/kbv-prompt
$(BUILD)/kbv-prompt: $(OBJ)/collect/suite/prompt_main.o $(PROMPT_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)

# The suite's and the prompt's unit tests see the registry's private headers.
$(OBJ)/tests/unit/test_suite_%.o: CPPFLAGS += $(SUITE_INC)
$(OBJ)/tests/unit/test_prompt_%.o: CPPFLAGS += $(SUITE_INC)
