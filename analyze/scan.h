/* scan.h - a fast scanner for the journal's flat records.
 *
 * The time samples are the bulk of a journal (about 100 MB for 100 problems
 * x 8 sets x 301 samples a variant), and a general JSON parser builds a tree
 * for each.  This scanner reads one flat JSON object (string, number, true,
 * false and null values) in a single pass, checks it against the JSON
 * grammar, and keeps only the members the analysis needs.  Anything else
 * (nested values, escapes in the strings it keeps, \u escapes anywhere, text
 * it does not accept) is left to the general parser, which also words the
 * error messages; so the scanner decides speed, never meaning.
 */
#ifndef KBV_SCAN_H
#define KBV_SCAN_H

#include <stddef.h>

enum { SCAN_ABSENT = 0, SCAN_NUMBER, SCAN_NULL, SCAN_OTHER };

typedef struct scan_str {
    const char *p;   /* borrowed from the line; not NUL-terminated */
    size_t len;      /* 0 and p NULL when absent or not a plain string */
} scan_str;

typedef struct scan_rec {
    scan_str type, set, problem, variant;
    int gpu_kind, wall_kind, mhz_kind;  /* SCAN_* for "gpu_ms", "wall_ms" and "sm_mhz" */
    int round_kind;                     /* SCAN_* for "round" */
    double gpu_ms, wall_ms, sm_mhz, round;
    /* Members a time record may not hold (DESIGN.md 5a step 7a: a key other
     * than type, set, problem, variant, round, gpu_ms, wall_ms, sm_mhz,
     * same_as, gt_ms), and members given twice: the journal grammar judges
     * such a record, so the caller leaves it to the general parser. */
    int odd_keys;
} scan_rec;

/* Returns 1 when line[0..len) is one flat JSON object, fully read into *out
 * (the first occurrence of a repeated key counts, as in cJSON); 0 when the
 * caller must use the general parser. */
int scan_flat(const char *line, size_t len, scan_rec *out);

/* Whether s equals the NUL-terminated lit. */
int scan_is(scan_str s, const char *lit);

#endif
