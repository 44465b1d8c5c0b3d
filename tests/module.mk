# tests/unit/test_*.c: one cmocka program each, linked with every stage's
# library; tests/run.sh runs them (TAP) and the CLI scripts in tests/cli/.
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

.PHONY: tests
tests: $(TEST_BINS)

$(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(TEST_LIBS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(TEST_LIBS) $(TEST_LDLIBS) $(LDLIBS_COMMON) -lcmocka
