# render/: canvas (Cairo: SVG/PNG; libharu: PDF), charts, tables, report.
# FreeType measures text (render/fontm.c) and fontconfig names the font file
# for cairo-ft; both are dependencies of Cairo already.
RENDER_SRCS := $(filter-out render/main.c,$(wildcard render/*.c))
RENDER_LIB  := $(BUILD)/libkbv_render.a
FT_CFLAGS   := $(shell pkg-config --cflags freetype2 fontconfig 2>/dev/null || echo -I/usr/include/freetype2)
FT_LIBS     := $(shell pkg-config --libs freetype2 fontconfig 2>/dev/null || echo -lfreetype -lfontconfig)
# libpng writes the PNG figures (render/png.c); Cairo depends on it already.
FT_LIBS     += -lpng16
PROGRAMS    += $(BUILD)/kbv-render

$(call objs,$(RENDER_SRCS) render/main.c): CPPFLAGS += $(CAIRO_CFLAGS) $(FT_CFLAGS)
$(call objs,render/main.c): CPPFLAGS += -DKBV_PREFIX=\"$(PREFIX)\"

$(RENDER_LIB): $(call objs,$(RENDER_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/kbv-render: $(OBJ)/render/main.o $(RENDER_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(CAIRO_LIBS) $(HPDF_LIBS) $(FT_LIBS) $(LDLIBS_COMMON) -pthread

# The render unit tests include render/ headers (and, through canvas.h,
# nothing from Cairo; pdfdoc.h needs hpdf.h, which is on the default path).
$(OBJ)/tests/unit/test_render_%.o: CPPFLAGS += -Irender $(CAIRO_CFLAGS) $(FT_CFLAGS)
