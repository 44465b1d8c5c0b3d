/* pins.h - a table of baseline kernel choices made once, so that every run
 * on the same GPU model and library versions times the same kernels
 * (issue 15: stable baselines).
 *
 * The file (kbv-pins/1, written by scripts/pins.py from a run's journal):
 *   {"schema": "kbv-pins/1", "gpu": "NVIDIA H200", "cublas": "13.1.0",
 *    "problems": {"L1_001_square_matrix_multiplication": "KEY=CHOICE;...", ...}}
 * where each problem's text is what the worker hands to base_pin (gpu.h).
 * A table for another GPU or cuBLAS applies to nothing: the baselines then
 * choose by timing, as without one.  No CUDA. */
#ifndef KBV_PINS_H
#define KBV_PINS_H

#include <cjson/cJSON.h>
#include "err.h"

/* The longest pins text of one problem: a network's convolutions (about
 * 18 KiB for DenseNet-201's 102 shapes, both variants and the reference)
 * with room to spare, and well inside one argument of the worker's argv
 * (128 KiB on Linux), which carries it. */
#define KBV_PINS_MAX 65536

typedef struct {
    cJSON *doc;            /* the whole file; owned */
    const cJSON *problems; /* into doc */
    char sha256[65];       /* of the file, for the manifest */
    int applies;           /* 1 when gpu and cublas match the run's device */
} pins_table;

/* Loads and checks path (a regular file); KBV_EINPUT naming the file and
 * the problem for anything malformed.  *t is cleared first. */
int pins_load(const char *path, pins_table *t, kbv_err *e);
/* Sets t->applies from the device record of the calibration (name, cublas). */
void pins_match(pins_table *t, const cJSON *device);
/* The pins of a problem, or NULL (none, or the table does not apply);
 * borrowed from t. */
const char *pins_for(const pins_table *t, const char *problem);
void pins_free(pins_table *t);

#endif
