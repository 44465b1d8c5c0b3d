/* Unit tests of the UTF-8 cleaning of journal records (rec.c): bytes a
 * candidate chose (its output in a status detail, a symbol name, a forged
 * worker line) never make the journal invalid UTF-8.  Expected strings are
 * worked out by hand from RFC 3629's table of well-formed sequences. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "rec.h"

static void check(const char *in, const char *want)
{
    char buf[64];
    strcpy(buf, in);
    rec_utf8_clean(buf);
    assert_string_equal(buf, want);
}

static void test_clean(void **state)
{
    (void)state;
    check("plain ascii", "plain ascii");
    check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    check("a\xff" "b\xfe", "a?b?");              /* never valid */
    check("\xc0\xaf", "??");                      /* overlong '/' */
    check("\xe0\x80\xaf", "???");                 /* overlong, 3 bytes */
    check("\xed\xa0\x80", "???");                 /* a surrogate */
    check("\xf4\x90\x80\x80", "????");            /* above U+10FFFF */
    check("\xe2\x82", "??");                      /* cut short at the end */
    check("x\xe2\x82y", "x??y");                  /* cut short inside */
    check("\x80\xbf", "??");                      /* lone continuation bytes */
}

static void test_records(void **state)
{
    (void)state;
    cJSON *r = rec_status("s\xff", "p", "crash", "output: \xfe\xc3\xa9");
    assert_non_null(r);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "detail")->valuestring, "output: ?\xc3\xa9");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "set")->valuestring, "s?");
    cJSON_Delete(r);
    /* A worker line with a bad key and a bad value in a nested array. */
    const char *line = "{\"type\":\"probe\",\"probe\":\"caching\",\"pass\":true,"
                       "\"detail\":\"a\xff\",\"x\xfe\":[\"\xc0\"]}";
    cJSON *o = NULL;
    kbv_err e;
    assert_int_equal(rec_from_worker(line, strlen(line), "set", "prob", &o, &e), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "detail")->valuestring, "a?");
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "x?");
    assert_non_null(arr);
    assert_string_equal(cJSON_GetArrayItem(arr, 0)->valuestring, "?");
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
