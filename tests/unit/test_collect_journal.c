/* Unit tests of collect's journal handling and plan: --resume keeps every
 * finished pair and drops the records of an interrupted one and a torn last
 * line (so that the resumed journal holds each pair once), the manifest
 * test of a resumed run, --shard and --suite, and the candidate sets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "manifest.h"
#include "plan.h"
#include "resume.h"

static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/kbv-test-collect-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    char *d = NULL;
    size_t n;
    kbv_err e;
    assert_int_equal(afile_read_all(path, &d, &n, &e), 0);
    return d;
}

static void rm_rf(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

#define A1 "{\"type\":\"build\",\"set\":\"s\",\"problem\":\"A\",\"ok\":true}\n"
#define A2 "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"A\",\"dist\":\"D1\",\"trial\":0,\"pass\":true}\n"
#define A3 "{\"type\":\"status\",\"set\":\"s\",\"problem\":\"A\",\"status\":\"ok\"}\n"
#define B1 "{\"type\":\"build\",\"set\":\"s\",\"problem\":\"B\",\"ok\":true}\n"
#define B2 "{\"type\":\"check\",\"set\":\"s\",\"problem\":\"B\",\"dist\":\"D1\",\"trial\":0,\"pass\":true}\n"
#define C1 "{\"type\":\"status\",\"set\":\"t\",\"problem\":\"A\",\"status\":\"missing\"}\n"
#define TORN "{\"type\":\"time\",\"set\":\"s\",\"problem\":\"B\",\"vari"

static void test_resume_drops_unfinished(void **state)
{
    (void)state;
    char *d = make_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/samples.jsonl", d);
    /* Pair (s, B) was running when collect died, its records interleaved
     * with a finished pair of another set, and the last line is torn. */
    write_text(path, A1 A2 A3 B1 C1 B2 TORN);
    resume_done done;
    resume_stats st;
    kbv_err e;
    assert_int_equal(resume_prepare(path, &done, &st, &e), 0);
    assert_int_equal(done.n, 2);
    assert_true(resume_is_done(&done, "s", "A"));
    assert_true(resume_is_done(&done, "t", "A"));
    assert_false(resume_is_done(&done, "s", "B"));
    assert_false(resume_is_done(&done, "t", "B"));
    assert_int_equal(st.kept, 4);
    assert_int_equal(st.dropped, 2);
    assert_int_equal(st.torn, 1);
    assert_int_equal(st.rewritten, 1);
    char *text = read_text(path);
    assert_string_equal(text, A1 A2 A3 C1);
    free(text);
    resume_done_free(&done);

    /* A second resume finds nothing to drop and leaves the file alone. */
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    assert_int_equal(resume_prepare(path, &done, &st, &e), 0);
    assert_int_equal(done.n, 2);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(st.rewritten, 0);
    assert_int_equal(stat(path, &after), 0);
    assert_true(before.st_ino == after.st_ino);
    resume_done_free(&done);

    /* No journal yet: nothing is done. */
    snprintf(path, sizeof path, "%s/none.jsonl", d);
    assert_int_equal(resume_prepare(path, &done, &st, &e), 0);
    assert_int_equal(done.n, 0);
    assert_false(resume_is_done(&done, "s", "A"));
    resume_done_free(&done);
    rm_rf(d);
    free(d);
}

static cJSON *manifest_with(double seed, double timeout, const char *hash)
{
    cJSON *m = cJSON_CreateObject();
    cJSON *c = cJSON_AddObjectToObject(m, "config");
    cJSON_AddNumberToObject(c, "seed", seed);
    cJSON_AddNumberToObject(c, "timeout_s", timeout);
    cJSON *p = cJSON_AddArrayToObject(m, "problems");
    cJSON_AddItemToArray(p, cJSON_CreateString("L1_019_relu"));
    cJSON *s = cJSON_AddArrayToObject(m, "sets");
    cJSON *so = cJSON_CreateObject();
    cJSON_AddItemToArray(s, so);
    cJSON_AddStringToObject(so, "name", "x");
    cJSON *f = cJSON_AddObjectToObject(so, "files");
    cJSON_AddStringToObject(f, "L1_019_relu", hash);
    return m;
}

static void test_manifest_compatible(void **state)
{
    (void)state;
    char why[256];
    cJSON *a = manifest_with(7, 120, "aa");
    cJSON *same = manifest_with(7, 120, "aa");
    cJSON *slower = manifest_with(7, 300, "aa");
    cJSON *seed = manifest_with(8, 120, "aa");
    cJSON *edited = manifest_with(7, 120, "bb");
    assert_int_equal(manifest_compatible(a, same, why, sizeof why), 1);
    /* The timeout only steers the run. */
    assert_int_equal(manifest_compatible(a, slower, why, sizeof why), 1);
    assert_int_equal(manifest_compatible(a, seed, why, sizeof why), 0);
    assert_non_null(strstr(why, "config.seed"));
    assert_int_equal(manifest_compatible(a, edited, why, sizeof why), 0);
    assert_non_null(strstr(why, "sets"));
    cJSON_Delete(a);
    cJSON_Delete(same);
    cJSON_Delete(slower);
    cJSON_Delete(seed);
    cJSON_Delete(edited);
    char id[64];
    kbv_err e;
    assert_int_equal(manifest_run_id(id, sizeof id, &e), 0);
    /* 20261129T231500Z-1a2b3c4d */
    assert_int_equal(strlen(id), 25);
    assert_true(id[8] == 'T' && id[15] == 'Z' && id[16] == '-');
}

static void test_shard(void **state)
{
    (void)state;
    int i, n;
    kbv_err e;
    assert_int_equal(plan_parse_shard("1/4", &i, &n, &e), 0);
    assert_int_equal(i, 1);
    assert_int_equal(n, 4);
    assert_int_equal(plan_parse_shard("1/1", &i, &n, &e), 0);
    assert_int_equal(plan_parse_shard("4/4", &i, &n, &e), 0);
    assert_int_equal(plan_parse_shard("0/4", &i, &n, &e), KBV_EUSAGE);
    assert_int_equal(plan_parse_shard("5/4", &i, &n, &e), KBV_EUSAGE);
    assert_int_equal(plan_parse_shard("-1/4", &i, &n, &e), KBV_EUSAGE);
    assert_int_equal(plan_parse_shard("1/0", &i, &n, &e), KBV_EUSAGE);
    assert_int_equal(plan_parse_shard("1/4x", &i, &n, &e), KBV_EUSAGE);
    assert_int_equal(plan_parse_shard("a/b", &i, &n, &e), KBV_EUSAGE);
    /* Shards 1..3 of 3 over 10 pairs: 0,3,6,9 / 1,4,7 / 2,5,8, each pair once. */
    int owner[10];
    for (int k = 0; k < 10; k++) {
        owner[k] = -1;
        for (int s = 1; s <= 3; s++)
            if (plan_shard_takes(k, s, 3)) {
                assert_int_equal(owner[k], -1);
                owner[k] = s;
            }
        assert_int_equal(owner[k], k % 3 + 1);
    }
}

static void test_plan(void **state)
{
    (void)state;
    char *d = make_tmpdir();
    char p[512];
    kbv_err e;
    /* Two sets: "alpha" names itself in set.json, "beta" is a folder name. */
    snprintf(p, sizeof p, "%s/one", d);
    assert_int_equal(afile_mkdirs(p, &e), 0);
    snprintf(p, sizeof p, "%s/one/set.json", d);
    write_text(p, "{\"name\": \"alpha\"}\n");
    snprintf(p, sizeof p, "%s/one/L1_019_relu.cu", d);
    write_text(p, "// relu\n");
    snprintf(p, sizeof p, "%s/beta", d);
    assert_int_equal(afile_mkdirs(p, &e), 0);
    snprintf(p, sizeof p, "%s/beta/L1_023_softmax.cu", d);
    write_text(p, "// softmax\n");
    snprintf(p, sizeof p, "%s/notaset", d);
    assert_int_equal(afile_mkdirs(p, &e), 0);

    const char *dirs[] = {d};
    plan pl;
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, NULL, 1, 1, NULL, &e), 0);
    assert_int_equal(pl.n_sets, 2);
    assert_string_equal(pl.sets[0].name, "beta"); /* folders in name order */
    assert_string_equal(pl.sets[1].name, "alpha");
    assert_int_equal(pl.n_problems, 3);
    assert_int_equal(pl.n_pairs, 6);
    assert_int_equal(pl.n_pairs_all, 6);
    int with_src = 0;
    for (int k = 0; k < pl.n_pairs; k++) {
        const plan_pair *pp = &pl.pairs[k];
        int expect = (pp->set == 0 && !strcmp(pp->p->id, "L1_023_softmax")) ||
                     (pp->set == 1 && !strcmp(pp->p->id, "L1_019_relu"));
        assert_int_equal(pp->src != NULL, expect);
        with_src += pp->src != NULL;
    }
    assert_int_equal(with_src, 2);
    plan_free(&pl);

    /* --problems and --shard. */
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, "L1_0[12]*", 1, 1, NULL, &e), 0);
    assert_int_equal(pl.n_problems, 2);
    assert_int_equal(pl.n_pairs, 4);
    plan_free(&pl);
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, NULL, 2, 4, NULL, &e), 0);
    assert_int_equal(pl.n_pairs, 2); /* shard 2 of 4: positions 1 and 5 of 6 */
    assert_int_equal(pl.n_pairs_all, 6);
    assert_int_equal(pl.pairs[0].set, 0);
    assert_int_equal(pl.pairs[1].set, 1);
    plan_free(&pl);

    /* One set folder given directly; errors are usage errors. */
    snprintf(p, sizeof p, "%s/one", d);
    const char *one[] = {p};
    assert_int_equal(plan_make(&pl, "smoke", one, 1, NULL, 1, 1, NULL, &e), 0);
    assert_int_equal(pl.n_sets, 1);
    assert_string_equal(pl.sets[0].name, "alpha");
    plan_free(&pl);
    assert_int_equal(plan_make(&pl, "nonsense", dirs, 1, NULL, 1, 1, NULL, &e), KBV_EUSAGE);
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, "nothing*", 1, 1, NULL, &e), KBV_EUSAGE);
    const char *twice[] = {p, p};
    assert_int_equal(plan_make(&pl, "smoke", twice, 2, NULL, 1, 1, NULL, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "alpha"));
    snprintf(p, sizeof p, "%s/notaset", d);
    const char *empty[] = {p};
    assert_int_equal(plan_make(&pl, "smoke", empty, 1, NULL, 1, 1, NULL, &e), KBV_EUSAGE);

    cJSON *m = NULL;
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, NULL, 1, 1, NULL, &e), 0);
    assert_int_equal(manifest_build("id", "2026-01-01T00:00:00Z", NULL, NULL, &pl, &m, &e), 0);
    cJSON *sets = cJSON_GetObjectItemCaseSensitive(m, "sets");
    assert_int_equal(cJSON_GetArraySize(sets), 2);
    cJSON *files = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(sets, 1), "files");
    cJSON *h = cJSON_GetObjectItemCaseSensitive(files, "L1_019_relu");
    assert_true(cJSON_IsString(h));
    /* sha256("// relu\n") computed with sha256sum. */
    assert_string_equal(h->valuestring, "f8560bb97d60d1cb49446d67c83c17a8785261b1190178ba5a5c31cd69decfac");
    cJSON_Delete(m);
    plan_free(&pl);

    /* The BF16 setting: "precision" and "compare_with" in set.json, the
     * manifest's entries, and --precision keeping one setting's sets. */
    snprintf(p, sizeof p, "%s/one/set.json", d);
    write_text(p, "{\"name\": \"alpha\", \"precision\": \"bf16\", \"compare_with\": \"beta\"}\n");
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, NULL, 1, 1, "all", &e), 0);
    assert_int_equal(pl.n_sets, 2);
    assert_int_equal(pl.sets[0].bf16, 0);
    assert_null(pl.sets[0].compare_with);
    assert_int_equal(pl.sets[1].bf16, 1);
    assert_string_equal(pl.sets[1].compare_with, "beta");
    assert_int_equal(manifest_build("id", "2026-01-01T00:00:00Z", NULL, NULL, &pl, &m, &e), 0);
    sets = cJSON_GetObjectItemCaseSensitive(m, "sets");
    cJSON *s0 = cJSON_GetArrayItem(sets, 0), *s1 = cJSON_GetArrayItem(sets, 1);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s0, "precision")->valuestring, "fp32");
    assert_null(cJSON_GetObjectItemCaseSensitive(s0, "compare_with"));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s1, "precision")->valuestring, "bf16");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(s1, "compare_with")->valuestring, "beta");
    cJSON_Delete(m);
    plan_free(&pl);
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, NULL, 1, 1, "bf16", &e), 0);
    assert_int_equal(pl.n_sets, 1);
    assert_string_equal(pl.sets[0].name, "alpha");
    assert_int_equal(pl.n_pairs, 3);
    plan_free(&pl);
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, NULL, 1, 1, "fp32", &e), 0);
    assert_int_equal(pl.n_sets, 1);
    assert_string_equal(pl.sets[0].name, "beta");
    plan_free(&pl);
    char onedir[512];
    snprintf(onedir, sizeof onedir, "%s/one", d);
    const char *only_one[] = {onedir};
    assert_int_equal(plan_make(&pl, "smoke", only_one, 1, NULL, 1, 1, "fp32", &e), KBV_EUSAGE);
    assert_non_null(strstr(e.msg, "precision fp32"));
    /* Malformed settings are usage errors naming the file. */
    write_text(p, "{\"name\": \"alpha\", \"precision\": \"fp16\"}\n");
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, NULL, 1, 1, NULL, &e), KBV_EUSAGE);
    assert_non_null(strstr(e.msg, "\"precision\" must be"));
    write_text(p, "{\"name\": \"alpha\", \"compare_with\": \"beta\"}\n");
    assert_int_equal(plan_make(&pl, "smoke", dirs, 1, NULL, 1, 1, NULL, &e), KBV_EUSAGE);
    assert_non_null(strstr(e.msg, "only for a set of"));
    rm_rf(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_drops_unfinished),
        cmocka_unit_test(test_manifest_compatible),
        cmocka_unit_test(test_shard),
        cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
