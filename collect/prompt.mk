# collect/prompt.mk: kbv prompt (the text a model needs to write a candidate).
# Pure C over the suite registry, always built.  The renderer is a library
# so that unit tests (tests/unit/test_prompt_*.c) link it.
PROMPT_SRCS := collect/prompt.c
PROMPT_LIB  := $(BUILD)/libkbv_prompt.a
$(call objs,$(PROMPT_SRCS) collect/prompt_main.c): CPPFLAGS += -Icollect
$(OBJ)/tests/unit/test_prompt_%.o: CPPFLAGS += -Icollect

$(PROMPT_LIB): $(call objs,$(PROMPT_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

PROGRAMS += $(BUILD)/kbv-prompt
$(BUILD)/kbv-prompt: $(OBJ)/collect/prompt_main.o $(PROMPT_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)
