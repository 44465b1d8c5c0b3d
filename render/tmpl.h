/* tmpl.h - templates/report.json: the report's sections in order, their
 * titles, introductions and captions, the verdict sentence and the chart
 * labels, all with {{placeholders}} filled from analysis.json.
 *
 * The whole template is checked when it is loaded: a key the renderer does
 * not know, a section id it does not know, a malformed placeholder and a
 * placeholder that is unknown where it is used are errors naming the file,
 * the field and the placeholder, before anything is written.
 */
#ifndef KBV_TMPL_H
#define KBV_TMPL_H

#include <cjson/cJSON.h>
#include "err.h"

/* Sections the renderer can draw. */
typedef enum {
    SEC_SUMMARY, SEC_HEADLINE, SEC_INFLATION, SEC_FAST_P, SEC_FOREST, SEC_SCATTER, SEC_CLASSES,
    SEC_HACKS, SEC_PROBLEMS, SEC_PARITY, SEC_DRIFT, SEC_METHODS, SEC_LEVELS, SEC_FAILURES, SEC_TOLERANCE,
    SEC_BF16, SEC_N
} sec_id;

/* A term and its definition (the methods section's "items"). */
#define TMPL_MAX_ITEMS 32
typedef struct titem {
    const char *term, *text;
} titem;

typedef struct tsection {
    sec_id id;
    const char *title, *intro, *caption, *figure_caption, *empty;   /* NULL when absent */
    const char *missing;          /* parity: the run directory has no parity.json; drift, levels, failures,
                                     tolerance: the analysis lacks what they show; NULL when absent */
    const char *compare_caption;  /* bf16: the caption of each BF16 set's comparison with its FP32 set */
    titem items[TMPL_MAX_ITEMS];  /* methods: its definitions, in order */
    int n_items;
} tsection;

/* Chart and page labels. */
typedef enum {
    LBL_SPEEDUP_AXIS, LBL_FAST_P_X, LBL_FAST_P_Y, LBL_MEMORY_AXIS, LBL_SCATTER_X, LBL_COUNT_AXIS,
    LBL_INFLATION_AXIS, LBL_OPEN_MARKER, LBL_FILLED_MARKER, LBL_PAGE, LBL_CONTINUED, LBL_N
} lbl_id;

typedef struct tmpl {
    cJSON *root;                  /* owned; strings below point into it */
    const char *path;             /* borrowed from the caller */
    const char *title, *subtitle;
    tsection sections[SEC_N];
    int n_sections;               /* in template order */
    const char *labels[LBL_N];
    const char *verdict_sentence, *verdict_none;
    const char *verdict_above, *verdict_below, *verdict_overlap, *verdict_same, *verdict_differ;
} tmpl;

int tmpl_load(tmpl *t, const char *path, kbv_err *e);
void tmpl_free(tmpl *t);

/* Values for placeholders: name -> text, both copied. */
#define TVARS_MAX 72
typedef struct tvars {
    int n;
    struct { char name[24]; char value[256]; } v[TVARS_MAX];
} tvars;

void tvars_set(tvars *v, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Expands {{name}} in s (no spaces inside the braces); *out is a malloc'd
 * string the caller frees.  where names the template field in errors. */
int tmpl_expand(const tmpl *t, const char *where, const char *s, const tvars *v, char **out, kbv_err *e);

/* The placeholder names of each scope, for tests and --help. */
extern const char *const tmpl_global_names[];
extern const char *const tmpl_set_names[];
extern const char *const tmpl_verdict_names[];
extern const char *const tmpl_parity_names[];
extern const char *const tmpl_drift_names[];
extern const char *const tmpl_bf16_names[];   /* the comparison figure's, beside the set's */

#endif
