# collect/supervise/: kbv-collect, the supervisor of the verification
# protocol (DESIGN.md 5a): plans, candidate builds and the static scan,
# isolation of the workers, the record channel, journal records, resume,
# the manifest, verdicts and the stopping rule's statistics.  The host logic
# needs no CUDA and lives in libkbv_collecthost.a, which the test_collect_*
# unit tests and the CPU stand-in of tests/fakegpu link; the program is
# built only with nvcc (it runs kbv-worker).  Depends on suite/ and common/.
SUPERVISE_INC    := -Icollect/supervise $(SUITE_INC)
COLLECTHOST_SRCS := $(filter-out collect/supervise/collect_main.c,$(wildcard collect/supervise/*.c))
COLLECTHOST_LIB  := $(BUILD)/libkbv_collecthost.a
$(call objs,$(COLLECTHOST_SRCS) collect/supervise/collect_main.c): CPPFLAGS += $(SUPERVISE_INC)
$(OBJ)/tests/unit/test_collect_%.o: CPPFLAGS += $(SUPERVISE_INC)

$(COLLECTHOST_LIB): $(call objs,$(COLLECTHOST_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

ifeq ($(HAVE_NVCC),1)
PROGRAMS += $(BUILD)/kbv-collect
$(BUILD)/kbv-collect: $(OBJ)/collect/supervise/collect_main.o $(COLLECTHOST_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)
endif
