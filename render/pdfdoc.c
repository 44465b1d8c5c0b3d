/* pdfdoc.c - libharu document and page canvas (see pdfdoc.h). */
#include "pdfdoc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PDF_MAX_ALPHA 16
#define PDF_MAX_SAVE 32

typedef struct cv_pdf {
    canvas base;
    pdfdoc *doc;
    HPDF_Page page;
    double alpha[PDF_MAX_SAVE];   /* fill/stroke alpha at each save depth */
    int depth;
} cv_pdf;

struct pdfdoc {
    HPDF_Doc pdf;
    const fontm *fm;
    HPDF_Font font[2];
    double page_w, page_h;
    cv_pdf **pages;
    int n_pages, cap_pages;
    HPDF_Outline *marks;
    int n_marks, cap_marks;
    struct { double a; HPDF_ExtGState gs; } alpha[PDF_MAX_ALPHA];
    int n_alpha;
    /* The first error libharu reported, for the message. */
    HPDF_STATUS err_no, err_detail;
};

static void on_error(HPDF_STATUS error_no, HPDF_STATUS detail_no, void *user)
{
    pdfdoc *d = user;
    if (!d->err_no) {
        d->err_no = error_no;
        d->err_detail = detail_no;
    }
}

static int pdf_failed(pdfdoc *d, const char *what, kbv_err *e)
{
    return err_set(e, KBV_ERUNTIME, "libharu failed %s (error 0x%04lX, detail %lu)", what,
                   (unsigned long)d->err_no, (unsigned long)d->err_detail);
}

/* --- the page canvas ------------------------------------------------------- */

#define PG(c) (((cv_pdf *)(c))->page)
#define FY(c, y) ((HPDF_REAL)(((cv_pdf *)(c))->doc->page_h - (y)))

static void pc_move(canvas *c, double x, double y) { HPDF_Page_MoveTo(PG(c), (HPDF_REAL)x, FY(c, y)); }
static void pc_line(canvas *c, double x, double y) { HPDF_Page_LineTo(PG(c), (HPDF_REAL)x, FY(c, y)); }
static void pc_curve(canvas *c, double x1, double y1, double x2, double y2, double x3, double y3)
{
    HPDF_Page_CurveTo(PG(c), (HPDF_REAL)x1, FY(c, y1), (HPDF_REAL)x2, FY(c, y2), (HPDF_REAL)x3, FY(c, y3));
}
static void pc_close(canvas *c) { HPDF_Page_ClosePath(PG(c)); }
static void pc_rect(canvas *c, double x, double y, double w, double h)
{
    HPDF_Page_Rectangle(PG(c), (HPDF_REAL)x, FY(c, y + h), (HPDF_REAL)w, (HPDF_REAL)h);
}
static void pc_fill(canvas *c) { HPDF_Page_Fill(PG(c)); }
static void pc_stroke(canvas *c) { HPDF_Page_Stroke(PG(c)); }
static void pc_clip(canvas *c)
{
    HPDF_Page_Clip(PG(c));
    HPDF_Page_EndPath(PG(c));
}
static void pc_save(canvas *c)
{
    cv_pdf *p = (cv_pdf *)c;
    HPDF_Page_GSave(p->page);
    if (p->depth + 1 < PDF_MAX_SAVE) {
        p->alpha[p->depth + 1] = p->alpha[p->depth];
        p->depth++;
    }
}
static void pc_restore(canvas *c)
{
    cv_pdf *p = (cv_pdf *)c;
    HPDF_Page_GRestore(p->page);
    if (p->depth > 0)
        p->depth--;
}

/* Canvas y runs down from the page top, PDF y up from the bottom; points are
 * flipped as (x, page_h - y), so a canvas move by (dx, dy) is a PDF move by
 * (dx, -dy). */
static void pc_translate(canvas *c, double dx, double dy)
{
    HPDF_Page_Concat(PG(c), 1, 0, 0, 1, (HPDF_REAL)dx, (HPDF_REAL)-dy);
}

static HPDF_ExtGState alpha_state(pdfdoc *d, double a)
{
    for (int i = 0; i < d->n_alpha; i++)
        if (d->alpha[i].a == a)
            return d->alpha[i].gs;
    if (d->n_alpha == PDF_MAX_ALPHA)
        return NULL;
    HPDF_ExtGState gs = HPDF_CreateExtGState(d->pdf);
    HPDF_ExtGState_SetAlphaFill(gs, (HPDF_REAL)a);
    HPDF_ExtGState_SetAlphaStroke(gs, (HPDF_REAL)a);
    d->alpha[d->n_alpha].a = a;
    d->alpha[d->n_alpha].gs = gs;
    d->n_alpha++;
    return gs;
}

static void pc_rgba(canvas *c, double r, double g, double b, double a)
{
    cv_pdf *p = (cv_pdf *)c;
    HPDF_Page_SetRGBFill(p->page, (HPDF_REAL)r, (HPDF_REAL)g, (HPDF_REAL)b);
    HPDF_Page_SetRGBStroke(p->page, (HPDF_REAL)r, (HPDF_REAL)g, (HPDF_REAL)b);
    /* Alphas are rounded to 1/100 so that the few the charts use share
     * their graphics-state objects. */
    a = round(a * 100) / 100;
    if (a != p->alpha[p->depth]) {
        HPDF_ExtGState gs = alpha_state(p->doc, a);
        if (gs)
            HPDF_Page_SetExtGState(p->page, gs);
        p->alpha[p->depth] = a;
    }
}
static void pc_lw(canvas *c, double w) { HPDF_Page_SetLineWidth(PG(c), (HPDF_REAL)w); }
static void pc_dash(canvas *c, const double *d, int n)
{
    HPDF_UINT16 pat[8];
    if (n > 8)
        n = 8;
    for (int i = 0; i < n; i++)
        pat[i] = (HPDF_UINT16)lround(d[i]);
    HPDF_Page_SetDash(PG(c), n ? pat : NULL, (HPDF_UINT)n, 0);
}

static void pc_text(canvas *c, double x, double y, const char *s, double size, int bold, double angle)
{
    cv_pdf *p = (cv_pdf *)c;
    size_t n = strlen(s);
    char small[256];
    char *t = n < sizeof small ? small : malloc(n + 1);
    if (!t)
        return;
    size_t k = 0;
    while (*s)
        t[k++] = (char)fontm_cp1252(fontm_utf8_next(&s));
    t[k] = 0;
    HPDF_Page_BeginText(p->page);
    HPDF_Page_SetFontAndSize(p->page, p->doc->font[bold ? 1 : 0], (HPDF_REAL)size);
    if (angle == 0) {
        HPDF_Page_TextOut(p->page, (HPDF_REAL)x, FY(c, y), t);
    } else {
        double r = angle * M_PI / 180, cs = cos(r), sn = sin(r);
        if (fabs(cs) < 1e-12)
            cs = 0;
        HPDF_Page_SetTextMatrix(p->page, (HPDF_REAL)cs, (HPDF_REAL)sn, (HPDF_REAL)-sn, (HPDF_REAL)cs,
                                (HPDF_REAL)x, FY(c, y));
        HPDF_Page_ShowText(p->page, t);
    }
    HPDF_Page_EndText(p->page);
    if (t != small)
        free(t);
}

static void pc_destroy(canvas *c)
{
    /* Page canvases belong to their document. */
    (void)c;
}

static const canvas_ops pdf_ops = {
    pc_move, pc_line, pc_curve, pc_close, pc_rect, pc_fill, pc_stroke, pc_clip,
    pc_save, pc_restore, pc_translate, pc_rgba, pc_lw, pc_dash, pc_text, pc_destroy,
};

/* --- the document ---------------------------------------------------------- */

int pdfdoc_new(pdfdoc **out, const fontm *fm, double page_w, double page_h, const pdf_date *date,
               const char *title, const char *creator, kbv_err *e)
{
    *out = NULL;
    pdfdoc *d = calloc(1, sizeof *d);
    if (!d)
        return err_set(e, KBV_ENOMEM, "out of memory for the PDF");
    d->fm = fm;
    d->page_w = page_w;
    d->page_h = page_h;
    d->pdf = HPDF_New(on_error, d);
    if (!d->pdf) {
        free(d);
        return err_set(e, KBV_ENOMEM, "libharu could not create a document");
    }
    HPDF_SetCompressionMode(d->pdf, HPDF_COMP_ALL);
    HPDF_SetPageMode(d->pdf, HPDF_PAGE_MODE_USE_OUTLINE);
    for (int w = 0; w < 2; w++) {
        const char *name = HPDF_LoadTTFontFromFile(d->pdf, fontm_path(fm, w), HPDF_TRUE);
        d->font[w] = name ? HPDF_GetFont(d->pdf, name, "WinAnsiEncoding") : NULL;
        if (!d->font[w]) {
            int rc = err_set(e, KBV_EINPUT, "%s: libharu could not embed the font (error 0x%04lX)",
                             fontm_path(fm, w), (unsigned long)d->err_no);
            pdfdoc_free(d);
            return rc;
        }
    }
    HPDF_Date dt = {date->year, date->month, date->day, date->hour, date->minute, date->second,
                    'Z', 0, 0};
    HPDF_SetInfoDateAttr(d->pdf, HPDF_INFO_CREATION_DATE, dt);
    HPDF_SetInfoDateAttr(d->pdf, HPDF_INFO_MOD_DATE, dt);
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_TITLE, title);
    HPDF_SetInfoAttr(d->pdf, HPDF_INFO_CREATOR, creator);
    if (d->err_no) {
        int rc = pdf_failed(d, "to set the document information", e);
        pdfdoc_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void pdfdoc_free(pdfdoc *d)
{
    if (!d)
        return;
    if (d->pdf)
        HPDF_Free(d->pdf);
    for (int i = 0; i < d->n_pages; i++)
        free(d->pages[i]);
    free(d->pages);
    free(d->marks);
    free(d);
}

int pdfdoc_add_page(pdfdoc *d, canvas **cv, kbv_err *e)
{
    if (d->n_pages == d->cap_pages) {
        int cap = d->cap_pages ? d->cap_pages * 2 : 16;
        cv_pdf **n = realloc(d->pages, (size_t)cap * sizeof *n);
        if (!n)
            return err_set(e, KBV_ENOMEM, "out of memory for PDF pages");
        d->pages = n;
        d->cap_pages = cap;
    }
    cv_pdf *p = calloc(1, sizeof *p);
    if (!p)
        return err_set(e, KBV_ENOMEM, "out of memory for PDF pages");
    p->base.ops = &pdf_ops;
    p->base.fm = d->fm;
    p->base.width = d->page_w;
    p->base.height = d->page_h;
    p->doc = d;
    p->alpha[0] = 1;
    p->page = HPDF_AddPage(d->pdf);
    if (!p->page) {
        free(p);
        return pdf_failed(d, "to add a page", e);
    }
    HPDF_Page_SetWidth(p->page, (HPDF_REAL)d->page_w);
    HPDF_Page_SetHeight(p->page, (HPDF_REAL)d->page_h);
    HPDF_Page_SetLineJoin(p->page, HPDF_MITER_JOIN);
    d->pages[d->n_pages] = p;
    if (cv)
        *cv = &p->base;
    return d->n_pages++;
}

int pdfdoc_page_count(const pdfdoc *d)
{
    return d->n_pages;
}

canvas *pdfdoc_canvas(pdfdoc *d, int page)
{
    return page >= 0 && page < d->n_pages ? &d->pages[page]->base : NULL;
}

int pdfdoc_bookmark(pdfdoc *d, int parent, const char *title, int page, double y, kbv_err *e)
{
    if (page < 0 || page >= d->n_pages)
        return err_set(e, KBV_ERUNTIME, "bookmark '%s' names page %d of %d", title, page + 1, d->n_pages);
    if (d->n_marks == d->cap_marks) {
        int cap = d->cap_marks ? d->cap_marks * 2 : 32;
        HPDF_Outline *n = realloc(d->marks, (size_t)cap * sizeof *n);
        if (!n)
            return err_set(e, KBV_ENOMEM, "out of memory for bookmarks");
        d->marks = n;
        d->cap_marks = cap;
    }
    char t[256];
    size_t k = 0;
    while (*title && k + 1 < sizeof t)
        t[k++] = (char)fontm_cp1252(fontm_utf8_next(&title));
    t[k] = 0;
    HPDF_Outline o = HPDF_CreateOutline(d->pdf, parent >= 0 ? d->marks[parent] : NULL, t, NULL);
    if (!o)
        return pdf_failed(d, "to add a bookmark", e);
    HPDF_Destination dst = HPDF_Page_CreateDestination(d->pages[page]->page);
    HPDF_Destination_SetFitH(dst, (HPDF_REAL)(d->page_h - y));
    HPDF_Outline_SetDestination(o, dst);
    HPDF_Outline_SetOpened(o, HPDF_TRUE);
    d->marks[d->n_marks] = o;
    return d->n_marks++;
}

int pdfdoc_save(pdfdoc *d, unsigned char **data, size_t *len, kbv_err *e)
{
    *data = NULL;
    *len = 0;
    if (d->err_no)
        return pdf_failed(d, "while drawing", e);
    if (HPDF_SaveToStream(d->pdf) != HPDF_OK)
        return pdf_failed(d, "to write the document", e);
    HPDF_UINT32 n = HPDF_GetStreamSize(d->pdf);
    unsigned char *b = malloc(n ? n : 1);
    if (!b)
        return err_set(e, KBV_ENOMEM, "out of memory for the PDF (%lu bytes)", (unsigned long)n);
    HPDF_UINT32 got = n;
    HPDF_ResetStream(d->pdf);
    HPDF_STATUS st = HPDF_ReadFromStream(d->pdf, b, &got);
    if ((st != HPDF_OK && st != HPDF_STREAM_EOF) || got != n) {
        free(b);
        return pdf_failed(d, "to read the document back", e);
    }
    *data = b;
    *len = n;
    return 0;
}
