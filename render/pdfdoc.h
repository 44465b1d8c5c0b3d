/* pdfdoc.h - the PDF document (libharu): pages, embedded fonts, bookmarks,
 * and the canvas backend that draws on a page as vector operations.
 *
 * Deterministic: the document's dates come from the caller (the run's
 * created_utc or SOURCE_DATE_EPOCH), libharu writes no file identifier
 * unless encryption is on (it never is here), and fonts are embedded from
 * the same TrueType files that fontm measures.
 */
#ifndef KBV_PDFDOC_H
#define KBV_PDFDOC_H

#include <stddef.h>
#include <hpdf.h>
#include "canvas.h"
#include "err.h"

typedef struct pdfdoc pdfdoc;

/* A UTC time of day, for the document's Info dates. */
typedef struct pdf_date {
    int year, month, day, hour, minute, second;
} pdf_date;

/* page_w x page_h points; title and creator go into Info (borrowed). */
int pdfdoc_new(pdfdoc **out, const fontm *fm, double page_w, double page_h, const pdf_date *date,
               const char *title, const char *creator, kbv_err *e);
void pdfdoc_free(pdfdoc *d);   /* NULL ok */

/* Adds a page and a canvas covering it (borrowed from d, valid until
 * pdfdoc_free).  Returns the page index (0-based) or a negative code. */
int pdfdoc_add_page(pdfdoc *d, canvas **cv, kbv_err *e);
int pdfdoc_page_count(const pdfdoc *d);
canvas *pdfdoc_canvas(pdfdoc *d, int page);

/* A bookmark to page `page` at height y (points from the top); parent -1
 * for a top-level entry.  Returns the bookmark's index or a negative code. */
int pdfdoc_bookmark(pdfdoc *d, int parent, const char *title, int page, double y, kbv_err *e);

/* Serialises the document into a malloc'd buffer owned by the caller. */
int pdfdoc_save(pdfdoc *d, unsigned char **data, size_t *len, kbv_err *e);

#endif
