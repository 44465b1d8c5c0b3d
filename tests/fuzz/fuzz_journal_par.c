/* fuzz_journal_par.c - analyze's parallel journal reader against its serial
 * one.  A plain journal of 4 MiB or more is mapped and cut into chunks read
 * by threads (run_load_jobs with 2 threads); the result, and the first error
 * with its line number, and the journal grammar's verdicts, must be those
 * of reading it line by line (1 thread).  The input sits between two runs of valid time records of equal
 * length, so that the cut between the two chunks falls inside it. */
#include <stdint.h>
#include <stddef.h>

#include "fuzz_util.h"
#include "run.h"

static const char manifest[] =
    "{\"schema\":\"kbv-run/1\",\"run_id\":\"fuzz\",\"created_utc\":\"2026-11-29T23:00:00Z\","
    "\"config\":{\"seed\":7},"
    "\"problems\":[\"L1_001_square_matrix_multiplication\",\"L1_019_relu\",\"L1_023_softmax\"],"
    "\"sets\":[{\"name\":\"tuned\"},{\"name\":\"hacky\"}]}\n";

/* Padding: probe records, long so that there are few lines to hand out;
 * most of the 4 MiB is one detail string, each line's own (a line repeated
 * byte for byte is refused), which the fast scanner leaves to cJSON (it is
 * not a time record). */
#define PAD_LINE_BYTES 65536

#define PAD_BYTES ((size_t)2200 * 1024)

static const char *const names[] = {"manifest.json", "samples.jsonl", NULL};

/* The same samples with the same rounds in the same order: the parallel
 * reader takes each chunk's records in journal order, as the journal
 * grammar needs, and analyze pairs the variants by round. */
static int same_vec(const run_vec *a, const run_vec *b)
{
    return a->n == b->n && (a->n == 0 || (memcmp(a->v, b->v, a->n * sizeof *a->v) == 0 &&
                                          memcmp(a->round, b->round, a->n * sizeof *a->round) == 0));
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    static char *pad[2];
    static size_t pad_len;
    if (!pad[0]) {
        static const char head[] = "{\"type\":\"probe\",\"set\":\"hacky\",\"problem\":\"L1_023_softmax\","
                                   "\"probe\":\"identity\",\"pass\":true,\"detail\":\"";
        static const char tail[] = "\"}\n";
        size_t l = PAD_LINE_BYTES, k = PAD_BYTES / l;
        for (int h = 0; h < 2; h++) {
            pad[h] = malloc(k * l);
            if (!pad[h]) abort();
            for (size_t i = 0; i < k; i++) {
                char *p = pad[h] + i * l;
                memset(p, 'a' + h, l);
                memcpy(p, head, sizeof head - 1);
                /* the line's own number, so that no two lines are equal */
                char num[16];
                int n = snprintf(num, sizeof num, "%zu-", i);
                memcpy(p + sizeof head - 1, num, (size_t)n);
                memcpy(p + l - (sizeof tail - 1), tail, sizeof tail - 1);
            }
        }
        pad_len = k * l;
        fuzz_write("manifest.json", manifest, sizeof manifest - 1);
    }
    /* An input that starts with gzip's magic would make the whole file
     * compressed-looking to nobody (it is in the middle); any byte goes. */
    char *text = malloc(2 * pad_len + size);
    if (!text) abort();
    memcpy(text, pad[0], pad_len);
    memcpy(text + pad_len, data, size);
    memcpy(text + pad_len + size, pad[1], pad_len);
    fuzz_write("samples.jsonl", text, 2 * pad_len + size);
    free(text);

    kbv_err e1 = {0}, e2 = {0};
    run_data *r1 = NULL, *r2 = NULL;
    int rc1 = run_load_jobs(fuzz_dir(), 1, &r1, &e1);
    int rc2 = run_load_jobs(fuzz_dir(), 2, &r2, &e2);
    if (rc1 != rc2 || (rc1 && strcmp(e1.msg, e2.msg) != 0)) {
        fprintf(stderr, "serial: %d %s\nparallel: %d %s\n", rc1, e1.msg, rc2, e2.msg);
        abort();
    }
    if (!rc1) {
        if (r1->n_lines != r2->n_lines || r1->n_time != r2->n_time || r1->dropped_torn != r2->dropped_torn) {
            fprintf(stderr, "lines %ld/%ld time %ld/%ld torn %d/%d\n", r1->n_lines, r2->n_lines, r1->n_time,
                    r2->n_time, r1->dropped_torn, r2->dropped_torn);
            abort();
        }
        for (size_t i = 0; i < r1->n_sets * r1->n_problems; i++) {
            const run_pair *a = &r1->pairs[i], *b = &r2->pairs[i];
            for (int v = 0; v < RUN_NV; v++)
                if (!same_vec(&a->times[v], &b->times[v])) abort();
            if (a->n_checks != b->n_checks || a->n_probes != b->n_probes || a->have_status != b->have_status ||
                !same_str(a->status, b->status) || a->have_build != b->have_build ||
                !same_str(a->tamper_why, b->tamper_why) ||
                memcmp(a->peak_bytes, b->peak_bytes, sizeof a->peak_bytes) != 0)
                abort();
        }
    }
    run_free(r1);
    run_free(r2);
    return 0;
}
