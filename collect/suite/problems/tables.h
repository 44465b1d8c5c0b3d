/* tables.h - the list of family tables that make up the suite.  Add a
 * table here (X(name)) and define it in its own .c file with
 * SUITE_COUNT(name). */
#ifndef KBV_TABLES_H
#define KBV_TABLES_H

#include "spec.h"

#define SUITE_TABLES \
    X(suite_l1_matmul) \
    X(suite_l1_activation) \
    X(suite_l1_softmax) \
    X(suite_l1_norm) \
    X(suite_l1_pool) \
    X(suite_l1_reduce) \
    X(suite_l1_conv) \
    X(suite_l1_scan) \
    X(suite_l1_loss) \
    X(suite_l2_chain) \
    X(suite_l2_linear) \
    X(suite_l2_conv2d) \
    X(suite_l2_conv3d) \
    X(suite_l3_net) \
    X(suite_l3_rnn)

#define X(name) SUITE_TABLE(name);
SUITE_TABLES
#undef X

#endif
