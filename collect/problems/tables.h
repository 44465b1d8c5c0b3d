/* tables.h - the list of family tables that make up the suite.  Add a
 * table here (X(name)) and define it in its own .c file with
 * SUITE_COUNT(name). */
#ifndef KBV_TABLES_H
#define KBV_TABLES_H

#include "spec.h"

#define SUITE_TABLES \
    X(suite_l1_matmul) \
    X(suite_l1_activation) \
    X(suite_l1_softmax)

#define X(name) SUITE_TABLE(name);
SUITE_TABLES
#undef X

#endif
