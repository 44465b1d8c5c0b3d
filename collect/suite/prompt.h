/* prompt.h - `kbv prompt`: the text a code-generating model needs to write a
 * candidate for one problem, made from a template with {{placeholders}}
 * (templates/prompts/candidate.txt).  Pure C; reads the registry only.
 *
 * Placeholders are `{{name}}` with a name of letters, digits and
 * underscores; prompt_placeholders() lists the known names.  Any other
 * name, and a `{{` without its `}}`, is an input error that names the
 * template, the line and the placeholder.
 */
#ifndef KBV_PROMPT_H
#define KBV_PROMPT_H

#include <stddef.h>
#include "err.h"
#include "suite.h"

/* Renders tmpl (NUL-terminated; tmpl_name is used in messages) for p.  On
 * success *out is a NUL-terminated string owned by the caller (free()).
 * flags is a sum of PROMPT_*:
 *   PROMPT_BLIND leaves out every value distribution and test-specific
 *     input setting (each input's values, the hidden distributions'
 *     transforms, the problem's own hard case), as KernelBench-Verified
 *     strips the test inputs from the prompts of problems whose inputs
 *     invite a shortcut; shapes, dtypes, attributes and the rules stay.
 *   PROMPT_BF16 asks for a candidate of the BF16 setting (DESIGN.md 5):
 *     floating-point tensors are described as bfloat16 (__nv_bfloat16 in
 *     the skeleton), the tolerance is BF16's, the precision paragraph
 *     names the bf16 baseline, and the BF16 note (PROMPT_BF16_NOTE) is
 *     appended after the template's text. */
enum { PROMPT_BLIND = 1, PROMPT_BF16 = 2 };
int prompt_render(const char *tmpl, const char *tmpl_name, const suite_problem *p, int flags, char **out,
                  kbv_err *e);
extern const char PROMPT_BF16_NOTE[];

/* 1 for the problems whose prompt is blind unless asked otherwise: those
 * KernelBench-Verified lists (cumprod, hinge loss, the LSTM of level 3's 35
 * and NetVLAD without ghost clusters, 47). */
int prompt_blind_default(const suite_problem *p);

/* The known placeholder names, NULL-terminated; static storage. */
const char *const *prompt_placeholders(void);

/* Up to max problem ids of the registry that are closest to `id` (ids that
 * contain it, or that it contains, first; then by edit distance, at most
 * a third of the length away), best first, in ids[] (borrowed from the
 * registry).  Returns how many. */
int prompt_suggest(const char *id, const char **ids, int max);

#endif
