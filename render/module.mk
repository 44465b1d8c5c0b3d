# render/: canvas (Cairo: SVG/PNG; libharu: PDF), charts, tables, report.
RENDER_SRCS := $(filter-out render/main.c,$(wildcard render/*.c))
RENDER_LIB  := $(BUILD)/libkbv_render.a
TEST_LIBS   := $(RENDER_LIB) $(TEST_LIBS)
TEST_LDLIBS += $(CAIRO_LIBS) $(HPDF_LIBS)
PROGRAMS    += $(BUILD)/kbv-render

$(call objs,$(RENDER_SRCS) render/main.c): CPPFLAGS += $(CAIRO_CFLAGS)

$(RENDER_LIB): $(call objs,$(RENDER_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/kbv-render: $(OBJ)/render/main.o $(RENDER_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(CAIRO_LIBS) $(HPDF_LIBS) $(LDLIBS_COMMON)
