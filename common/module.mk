# common/: shared by every stage (snapshot I/O, errors, SHA-256, paths).
COMMON_SRCS := $(wildcard common/*.c)
COMMON_LIB  := $(BUILD)/libkbv_common.a
TEST_LIBS   += $(COMMON_LIB)

$(COMMON_LIB): $(call objs,$(COMMON_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The dispatcher: `kbv analyze ...` runs kbv-analyze from its own folder.
PROGRAMS += $(BUILD)/kbv
$(BUILD)/kbv: $(OBJ)/dispatch/kbv.o $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)

# kbv-merge: joins shards of one run; pure C, so Slurm's merge job needs no GPU.
PROGRAMS += $(BUILD)/kbv-merge
$(BUILD)/kbv-merge: $(OBJ)/dispatch/merge.o $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)
