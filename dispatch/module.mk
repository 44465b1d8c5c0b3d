# dispatch/: the command `kbv` (runs kbv-<stage> from its own folder, the git
# model) and `kbv merge`, which joins shards of one run.  Pure C over common/,
# so that Slurm's merge job needs no GPU.  merge is a module (merge.c, a
# library for the fuzz harness and tests) with a thin main.
MERGE_SRCS := dispatch/merge.c
MERGE_LIB  := $(BUILD)/libkbv_merge.a
$(call objs,$(MERGE_SRCS) dispatch/merge_main.c): CPPFLAGS += -Idispatch

$(MERGE_LIB): $(call objs,$(MERGE_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

PROGRAMS += $(BUILD)/kbv
$(BUILD)/kbv: $(OBJ)/dispatch/kbv.o $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)

PROGRAMS += $(BUILD)/kbv-merge
$(BUILD)/kbv-merge: $(OBJ)/dispatch/merge_main.o $(MERGE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)
