# common/: shared by every stage (snapshot I/O, errors, SHA-256, paths).
COMMON_SRCS := $(wildcard common/*.c)
COMMON_LIB  := $(BUILD)/libkbv_common.a

$(COMMON_LIB): $(call objs,$(COMMON_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

