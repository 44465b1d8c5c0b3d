/* table.c - tables as CSV, LaTeX and PDF (see table.h). */
#include "table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chart.h"

/* The cache of natural column widths (see table.h); valid for one font and
 * size, until a row is added. */
struct tbl_widths {
    int valid;
    const fontm *fm;
    double fs;
    double *w;   /* ncol, owned */
};

int tbl_init(tbl *t, int ncol, const char *const *head, const char *align, kbv_err *e)
{
    memset(t, 0, sizeof *t);
    t->ncol = ncol;
    t->head = calloc((size_t)ncol, sizeof *t->head);
    t->align = calloc((size_t)ncol + 1, 1);
    t->widths = calloc(1, sizeof *t->widths);
    if (!t->head || !t->align || !t->widths || !(t->widths->w = calloc((size_t)ncol + 1, sizeof *t->widths->w)))
        goto oom;
    for (int i = 0; i < ncol; i++) {
        if (!(t->head[i] = strdup(head[i])))
            goto oom;
        t->align[i] = align[i];
    }
    return 0;
oom:
    tbl_free(t);
    return err_set(e, KBV_ENOMEM, "out of memory for a table");
}

int tbl_add(tbl *t, const char *const *cells, int muted, int rule, kbv_err *e)
{
    if (t->nrow == t->cap) {
        int cap = t->cap ? t->cap * 2 : 32;
        char **c = realloc(t->cell, (size_t)cap * (size_t)t->ncol * sizeof *c);
        if (c)
            t->cell = c;
        unsigned char *m = realloc(t->muted, (size_t)cap);
        if (m)
            t->muted = m;
        unsigned char *r = realloc(t->rule, (size_t)cap);
        if (r)
            t->rule = r;
        if (!c || !m || !r)
            return err_set(e, KBV_ENOMEM, "out of memory for a table");
        t->cap = cap;
    }
    for (int i = 0; i < t->ncol; i++) {
        char *s = strdup(cells[i] ? cells[i] : "");
        if (!s) {
            for (int k = 0; k < i; k++)
                free(t->cell[(size_t)t->nrow * t->ncol + k]);
            return err_set(e, KBV_ENOMEM, "out of memory for a table");
        }
        t->cell[(size_t)t->nrow * t->ncol + i] = s;
    }
    t->muted[t->nrow] = (unsigned char)muted;
    t->rule[t->nrow] = (unsigned char)rule;
    t->nrow++;
    if (t->widths)
        t->widths->valid = 0;
    return 0;
}

void tbl_free(tbl *t)
{
    if (t->head)
        for (int i = 0; i < t->ncol; i++)
            free(t->head[i]);
    if (t->cell)
        for (size_t i = 0; i < (size_t)t->nrow * t->ncol; i++)
            free(t->cell[i]);
    free(t->head);
    free(t->align);
    free(t->cell);
    free(t->muted);
    free(t->rule);
    if (t->widths)
        free(t->widths->w);
    free(t->widths);
    memset(t, 0, sizeof *t);
}

static const char *cell(const tbl *t, int r, int c)
{
    return t->cell[(size_t)r * t->ncol + c];
}

static void csv_field(sbuf *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        sb_puts(out, s);
        return;
    }
    sb_puts(out, "\"");
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            sb_puts(out, "\"\"");
        else
            sb_add(out, p, 1);
    }
    sb_puts(out, "\"");
}

void tbl_csv(const tbl *t, sbuf *out)
{
    for (int c = 0; c < t->ncol; c++) {
        if (c)
            sb_puts(out, ",");
        csv_field(out, t->head[c]);
    }
    sb_puts(out, "\n");
    for (int r = 0; r < t->nrow; r++) {
        for (int c = 0; c < t->ncol; c++) {
            if (c)
                sb_puts(out, ",");
            csv_field(out, cell(t, r, c));
        }
        sb_puts(out, "\n");
    }
}

void tex_escape(sbuf *out, const char *s)
{
    while (*s) {
        const char *start = s;
        /* "-\n" is a break inside a word made for the PDF's narrow columns
         * ("incor-\nrect"): LaTeX gets the word whole. */
        if (s[0] == '-' && s[1] == '\n') {
            s += 2;
            continue;
        }
        unsigned cp = fontm_utf8_next(&s);
        switch (cp) {
        case '\\': sb_puts(out, "\\textbackslash{}"); break;
        case '&': sb_puts(out, "\\&"); break;
        case '%': sb_puts(out, "\\%"); break;
        case '$': sb_puts(out, "\\$"); break;
        case '#': sb_puts(out, "\\#"); break;
        case '_': sb_puts(out, "\\_"); break;
        case '{': sb_puts(out, "\\{"); break;
        case '}': sb_puts(out, "\\}"); break;
        case '~': sb_puts(out, "\\textasciitilde{}"); break;
        case '^': sb_puts(out, "\\textasciicircum{}"); break;
        case '<': sb_puts(out, "\\textless{}"); break;
        case '>': sb_puts(out, "\\textgreater{}"); break;
        case '|': sb_puts(out, "\\textbar{}"); break;
        case '\n': sb_puts(out, " "); break;
        case 0x2013: sb_puts(out, "--"); break;
        case 0x2014: sb_puts(out, "---"); break;
        case 0x2026: sb_puts(out, "\\ldots{}"); break;
        case 0x00D7: sb_puts(out, "$\\times$"); break;
        case 0x00B1: sb_puts(out, "$\\pm$"); break;
        default: sb_add(out, start, (size_t)(s - start)); break;
        }
    }
}

/* A cell for a p{} column: escaped as tex_escape does, with a line break
 * of the PDF's cell ("\n", also after a hyphen: "incor-\nrect") kept as
 * \newline, and a break allowed after '_' and '/', so that problem ids and
 * paths wrap inside their column instead of running over the next one. */
static void tex_cell(sbuf *out, const char *s)
{
    while (*s) {
        if (s[0] == '\n') {
            sb_puts(out, "\\newline{}");
            s++;
            continue;
        }
        const char *p = s;
        while (*p && *p != '\n' && *p != '_' && *p != '/')
            p++;
        if (*p == '_' || *p == '/')
            p++;
        /* tex_escape works on a copy of the piece, which ends a break. */
        size_t n = (size_t)(p - s);
        char buf[256];
        if (n < sizeof buf) {
            memcpy(buf, s, n);
            buf[n] = 0;
            tex_escape(out, buf);
        } else {
            char *h = malloc(n + 1);
            if (!h) {
                out->failed = 1;
                return;
            }
            memcpy(h, s, n);
            h[n] = 0;
            tex_escape(out, h);
            free(h);
        }
        if (p[-1] == '_' || p[-1] == '/')
            sb_puts(out, "\\allowbreak{}");
        s = p;
    }
}

/* The width of a character of Computer Modern in units of a digit's: the
 * narrow letters, the wide ones and capitals, so that a column of "m"s and
 * one of "i"s both fit.  Non-ASCII characters count as wide. */
static double char_units(unsigned char ch)
{
    if (ch >= 0x80)
        return 1.5;
    if (strchr("iljtfr.,:;'!|", ch))
        return 0.6;
    if (strchr("mwMW%", ch))
        return 1.7;
    if (ch >= 'A' && ch <= 'Z')
        return 1.45;
    if (strchr("()[]-", ch))
        return 0.8;
    if (strchr("=+<>_~", ch))
        return 1.6;
    return 1.0;
}

/* Width of a cell for layout, in digit widths: its longest line (natural)
 * and its longest piece that cannot break (at a space, after '_' or '/'). */
static void cell_chars(const char *s, double *nat, double *tok)
{
    double line = 0, word = 0;
    for (const char *p = s;; p++) {
        int end = *p == 0 || *p == '\n';
        /* A UTF-8 continuation byte is part of the character before it. */
        double u = end || ((unsigned char)*p & 0xC0) == 0x80 ? 0 : char_units((unsigned char)*p);
        if (*p == '_' || *p == '/') {
            /* The break comes after it: it belongs to the word before. */
            word += u;
            line += u;
        }
        if (end || *p == ' ' || *p == '_' || *p == '/') {
            if (word > *tok)
                *tok = word;
            word = 0;
        }
        if (end) {
            if (line > *nat)
                *nat = line;
            line = 0;
            if (!*p)
                break;
            continue;
        }
        if (*p == ' ') {
            line += 0.6;
        } else if (*p != '_' && *p != '/') {
            word += u;
            line += u;
        }
    }
}

/* Tables with more rows than this are longtables, which break across
 * pages and repeat their header. */
#define TEX_LONG_ROWS 20
/* The text width of a plain article (345 pt), the padding between two
 * columns (2 x 3 pt; 2 x 2 pt in \tiny) and the width of a digit of
 * \scriptsize (7 pt: cmr7's 4.0 pt) and \tiny (5 pt: cmr5's 3.4 pt) text,
 * with a little to spare.  A table whose unbreakable parts do not fit at
 * \scriptsize is set in \tiny. */
#define TEX_LINE_PT 345.0
#define TEX_SEP_PT 6.0
#define TEX_TINY_SEP_PT 4.0
#define TEX_CHAR_PT 4.3
#define TEX_TINY_CHAR_PT 3.8

void tbl_tex(const tbl *t, const char *caption, sbuf *out)
{
    int long_table = t->nrow > TEX_LONG_ROWS;
    sb_puts(out, "% Generated by kbv-render; needs \\usepackage{booktabs,array");
    sb_puts(out, long_table ? ",longtable}" : "}");
    sb_puts(out, ".\n% It fills \\linewidth; text columns wrap.\n");
    if (caption) {
        sb_puts(out, "% ");
        for (const char *p = caption; *p; p++)
            sb_add(out, *p == '\n' ? " " : p, 1);
        sb_puts(out, "\n");
    }
    /* Column widths: each column gets at least its longest unbreakable
     * piece, and the rest of the line in proportion to what its longest
     * line needs beyond that (a text column's need capped, so that long
     * evidence wraps and does not starve the numbers), so that the table
     * fits the text width whatever its content. */
    double *w = calloc((size_t)t->ncol, sizeof *w);
    double *nat = calloc((size_t)t->ncol, sizeof *nat), *tok = calloc((size_t)t->ncol, sizeof *tok);
    if (!w || !nat || !tok) {
        out->failed = 1;
        goto done;
    }
    for (int c = 0; c < t->ncol; c++) {
        cell_chars(t->head[c], &nat[c], &tok[c]);
        for (int r = 0; r < t->nrow; r++)
            cell_chars(cell(t, r, c), &nat[c], &tok[c]);
        if (t->align[c] == 'w' && nat[c] > 60)
            nat[c] = 60;
        if (tok[c] > nat[c])
            nat[c] = tok[c];
        if (tok[c] < 1)
            tok[c] = 1;
    }
    double content = TEX_LINE_PT - TEX_SEP_PT * (t->ncol - 1);
    double room = content / TEX_CHAR_PT, base = 0, extra = 0;
    for (int c = 0; c < t->ncol; c++) {
        base += tok[c];
        extra += nat[c] - tok[c];
    }
    int tiny = base > room;
    double sep = TEX_SEP_PT;
    if (tiny) {
        sep = TEX_TINY_SEP_PT;
        content = TEX_LINE_PT - sep * (t->ncol - 1);
        room = content / TEX_TINY_CHAR_PT;
    }
    /* What fits is given as it is (the normalisation below spreads the
     * room left over); else every column keeps its unbreakable part and
     * shares the room left in proportion to the rest. */
    for (int c = 0; c < t->ncol; c++) {
        if (base + extra <= room)
            w[c] = nat[c];
        else if (base < room && extra > 0)
            w[c] = tok[c] + (room - base) * (nat[c] - tok[c]) / extra;
        else
            w[c] = tok[c];
    }
    double total = 0;
    for (int c = 0; c < t->ncol; c++)
        total += w[c];
    sb_printf(out, "{\\%s\\setlength{\\tabcolsep}{%gpt}\n", tiny ? "tiny" : "scriptsize", sep / 2);
    sb_puts(out, long_table ? "\\begin{longtable}{@{}" : "\\noindent\\begin{tabular}{@{}");
    /* Column c gets its share of \linewidth less the padding between
     * columns (none outside the first and last, @{}); shares are cut to 4
     * decimals downwards, so that they never add up to more than the line. */
    for (int c = 0; c < t->ncol; c++) {
        double f = floor((total > 0 ? w[c] / total : 1.0 / t->ncol) * 1e4) / 1e4;
        sb_printf(out, ">{\\%s\\arraybackslash}p{\\dimexpr %.4f\\linewidth-%.2fpt\\relax}",
                  t->align[c] == 'r' ? "raggedleft" : "raggedright", f, f * sep * (t->ncol - 1));
    }
    sb_puts(out, "@{}}\n\\toprule\n");
    for (int c = 0; c < t->ncol; c++) {
        if (c)
            sb_puts(out, " & ");
        tex_cell(out, t->head[c]);
    }
    sb_puts(out, " \\\\\n\\midrule\n");
    if (long_table) {
        /* The header again on every page after the first. */
        sb_puts(out, "\\endfirsthead\n\\toprule\n");
        for (int c = 0; c < t->ncol; c++) {
            if (c)
                sb_puts(out, " & ");
            tex_cell(out, t->head[c]);
        }
        sb_puts(out, " \\\\\n\\midrule\n\\endhead\n\\bottomrule\n\\endlastfoot\n");
    }
    for (int r = 0; r < t->nrow; r++) {
        if (t->rule[r] && r > 0)
            sb_puts(out, "\\midrule\n");
        for (int c = 0; c < t->ncol; c++) {
            if (c)
                sb_puts(out, " & ");
            tex_cell(out, cell(t, r, c));
        }
        sb_puts(out, " \\\\\n");
    }
    /* "%" ends the line without the space that would widen the line of a
     * tabular by one word space. */
    sb_puts(out, long_table ? "\\end{longtable}\n}\n" : "\\bottomrule\n\\end{tabular}\\par\n}\n");
done:
    free(w);
    free(nat);
    free(tok);
}

/* --- drawing --------------------------------------------------------------- */

#define TB_PAD 3.0
#define TB_LINE_GAP 2.2
#define TB_MAX_LINES 24

/* Widest line of s. */
static double natural_width(canvas *c, const char *s, double fs, int bold)
{
    double w = 0;
    const char *p = s;
    while (1) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        double x = fontm_width_n(c->fm, bold, fs, p, n);
        if (x > w)
            w = x;
        if (!nl)
            break;
        p = nl + 1;
    }
    return w;
}

static void col_widths(const tbl *t, canvas *c, const rstyle *st, double w, double *cw)
{
    double fs = st->fs_small, total = 0, wrap_total = 0;
    struct tbl_widths *cache = t->widths;
    int cached = cache && cache->valid && cache->fm == c->fm && cache->fs == fs;
    for (int k = 0; k < t->ncol; k++) {
        if (cached) {
            cw[k] = cache->w[k];
        } else {
            cw[k] = natural_width(c, t->head[k], fs, 1);
            for (int r = 0; r < t->nrow; r++) {
                double x = natural_width(c, cell(t, r, k), fs, 0);
                if (x > cw[k])
                    cw[k] = x;
            }
            if (cache)
                cache->w[k] = cw[k];
        }
        cw[k] += 2 * TB_PAD;
        total += cw[k];
        if (t->align[k] == 'w')
            wrap_total += cw[k];
    }
    if (cache && !cached) {
        cache->valid = 1;
        cache->fm = c->fm;
        cache->fs = fs;
    }
    if (total <= w && wrap_total == 0)
        return;
    /* Wrapped columns share what the others leave, in proportion to their
     * natural widths; a table that fits keeps its natural widths but its
     * wrapped columns stretch to the full width. */
    double fixed = total - wrap_total, avail = w - fixed;
    int n_wrap = 0;
    for (int k = 0; k < t->ncol; k++)
        n_wrap += t->align[k] == 'w';
    if (wrap_total > 0 && avail > n_wrap * 40) {
        if (wrap_total <= avail) {
            /* Everything fits: the wrapped columns take the spare width. */
            for (int k = 0; k < t->ncol; k++)
                if (t->align[k] == 'w')
                    cw[k] = avail * cw[k] / wrap_total;
            return;
        }
        /* Water-filling: one width limit for the wrapped columns, so that a
         * narrow column keeps its natural width and only the wide ones wrap. */
        double lo = 0, hi = avail;
        for (int it = 0; it < 40; it++) {
            double cap = (lo + hi) / 2, sum = 0;
            for (int k = 0; k < t->ncol; k++)
                if (t->align[k] == 'w')
                    sum += cw[k] < cap ? cw[k] : cap;
            if (sum > avail)
                hi = cap;
            else
                lo = cap;
        }
        for (int k = 0; k < t->ncol; k++)
            if (t->align[k] == 'w' && cw[k] > lo)
                cw[k] = lo;
    } else if (total > w) {
        for (int k = 0; k < t->ncol; k++)
            cw[k] *= w / total;
    }
}

/* Splits a cell into drawn lines: at '\n', and wrapped in 'w' columns. */
static int cell_lines(const tbl *t, canvas *c, double fs, int bold, int col, const char *s, double cw, char **lines)
{
    int n = 0;
    const char *p = s;
    while (n < TB_MAX_LINES) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *piece = strndup(p, len);
        if (!piece)
            break;
        if (t->align[col] == 'w' && fontm_width(c->fm, bold, fs, piece) > cw - 2 * TB_PAD) {
            n += chart_wrap(c->fm, piece, fs, bold, cw - 2 * TB_PAD, lines + n, TB_MAX_LINES - n);
            free(piece);
        } else {
            lines[n++] = piece;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    return n;
}

static double row_height(const tbl *t, canvas *c, const rstyle *st, const double *cw, int r)
{
    double fs = st->fs_small;
    int most = 1;
    for (int k = 0; k < t->ncol; k++) {
        char *lines[TB_MAX_LINES];
        int n = cell_lines(t, c, fs, r < 0, k, r < 0 ? t->head[k] : cell(t, r, k), cw[k], lines);
        for (int i = 0; i < n; i++)
            free(lines[i]);
        if (n > most)
            most = n;
    }
    return most * (fs + TB_LINE_GAP) + 2 * TB_PAD;
}

static void draw_row(const tbl *t, canvas *c, const rstyle *st, const double *cw, double x, double y, int r)
{
    double fs = st->fs_small;
    double cx = x;
    canvas_color(c, r >= 0 && t->muted[r] ? st->muted : st->text);
    for (int k = 0; k < t->ncol; k++) {
        char *lines[TB_MAX_LINES];
        int n = cell_lines(t, c, fs, r < 0, k, r < 0 ? t->head[k] : cell(t, r, k), cw[k], lines);
        for (int i = 0; i < n; i++) {
            double by = y + TB_PAD + i * (fs + TB_LINE_GAP) + fs * 0.78;
            if (t->align[k] == 'r')
                canvas_text(c, cx + cw[k] - TB_PAD, by, lines[i], fs, r < 0, CANVAS_RIGHT, 0);
            else
                canvas_text(c, cx + TB_PAD, by, lines[i], fs, r < 0, CANVAS_LEFT, 0);
            free(lines[i]);
        }
        cx += cw[k];
    }
}

double tbl_first_row_height(const tbl *t, canvas *c, const rstyle *st, double w, int r)
{
    double cw[64];
    if (t->ncol > 64)
        return 0;
    col_widths(t, c, st, w, cw);
    return row_height(t, c, st, cw, -1) + (r < t->nrow ? row_height(t, c, st, cw, r) : 0) + 4;
}

void tbl_draw(const tbl *t, canvas *c, const rstyle *st, double x, double y, double w, int r0, double max_h,
              int *next, double *used)
{
    double cw[64];
    *next = r0;
    *used = 0;
    if (t->ncol > 64)
        return;
    col_widths(t, c, st, w, cw);
    double tw = 0;
    for (int k = 0; k < t->ncol; k++)
        tw += cw[k];
    double hh = row_height(t, c, st, cw, -1), yy = y;
    canvas_color(c, st->rule);
    canvas_width(c, st->line);
    canvas_segment(c, x, yy, x + tw, yy);
    draw_row(t, c, st, cw, x, yy, -1);
    yy += hh;
    canvas_color(c, st->rule);
    canvas_width(c, st->line_thin);
    canvas_segment(c, x, yy, x + tw, yy);
    int r = r0;
    while (r < t->nrow) {
        double rh = row_height(t, c, st, cw, r);
        if (yy + rh - y > max_h && r > r0)
            break;
        if (t->rule[r] && r > r0) {
            canvas_color(c, st->grid);
            canvas_width(c, st->line_thin);
            canvas_segment(c, x, yy, x + tw, yy);
        }
        draw_row(t, c, st, cw, x, yy, r);
        yy += rh;
        r++;
    }
    canvas_color(c, st->rule);
    canvas_width(c, st->line);
    canvas_segment(c, x, yy, x + tw, yy);
    *next = r;
    *used = yy - y + 1;
}
