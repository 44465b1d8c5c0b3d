/* nmap.h - a name -> index table over an array of strings, built once and
 * looked up in constant time, so that readers of a manifest with many
 * problem ids (100k and more) stay linear in its size instead of searching
 * the list for every record. */
#ifndef KBV_NMAP_H
#define KBV_NMAP_H

#include <stddef.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

typedef struct nmap nmap;

/* Builds a table of names[0..n) (borrowed: they must outlive the table); a
 * name given twice keeps its first index.  *out is owned by the caller
 * (nmap_free). */
int nmap_build(const char *const *names, size_t n, nmap **out, kbv_err *e);
void nmap_free(nmap *m);   /* NULL ok */

/* The index of name p[0..len), or -1. */
long nmap_find_n(const nmap *m, const char *p, size_t len);
long nmap_find(const nmap *m, const char *name);

#ifdef __cplusplus
}
#endif

#endif
