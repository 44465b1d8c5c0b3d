/* table.h - a table of text cells, written as CSV, as LaTeX (booktabs) and
 * drawn on PDF pages (flowing over pages, header repeated).
 *
 * Cells are UTF-8 strings; a '\n' in a cell breaks the line in the PDF and
 * becomes a space in LaTeX.  The table owns copies of everything.
 */
#ifndef KBV_TABLE_H
#define KBV_TABLE_H

#include <stddef.h>
#include "canvas.h"
#include "err.h"
#include "sbuf.h"
#include "style.h"


typedef struct tbl {
    int ncol, nrow, cap;
    char **head;     /* ncol */
    char *align;     /* per column: 'l' left, 'r' right, 'w' left and wrapped to fit */
    char **cell;     /* nrow * ncol */
    unsigned char *muted;   /* per row: drawn in the muted colour */
    unsigned char *rule;    /* per row: a thin rule above it (a new group) */
    /* The natural column widths, measured once over every row and kept
     * (owned; NULL for a table not made by tbl_init): a table drawn over
     * many pages is measured once, not once a page.  A const table can
     * still fill it, since only the pointer is part of the table. */
    struct tbl_widths *widths;
} tbl;

/* align holds one character per column. */
int tbl_init(tbl *t, int ncol, const char *const *head, const char *align, kbv_err *e);
int tbl_add(tbl *t, const char *const *cells, int muted, int rule, kbv_err *e);
void tbl_free(tbl *t);

/* RFC 4180 CSV (fields quoted where needed, CRLF-free: "\n" line ends). */
void tbl_csv(const tbl *t, sbuf *out);
/* A booktabs tabular; the comment line names the source and the caption. */
void tbl_tex(const tbl *t, const char *caption, sbuf *out);
/* LaTeX escaping of one string, appended to out. */
void tex_escape(sbuf *out, const char *s);

/* Draws rows [r0, ...) in the box (x, y, w) on c, starting with the
 * header, as many as fit in max_h; *next is the first row not drawn and
 * *used the height used.  At least one row is drawn when any remains, so
 * that a row taller than a page cannot stall the flow. */
void tbl_draw(const tbl *t, canvas *c, const rstyle *st, double x, double y, double w, int r0, double max_h,
              int *next, double *used);
/* Height of the header plus row r, for deciding whether to start a page. */
double tbl_first_row_height(const tbl *t, canvas *c, const rstyle *st, double w, int r);

#endif
