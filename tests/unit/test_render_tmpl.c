/* Unit tests of render/: report.json templates (placeholders, errors that
 * name the file, the field and the placeholder), style.json, the number
 * formats, and tables as CSV (RFC 4180) and LaTeX (booktabs, escaping). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "style.h"
#include "table.h"
#include "tmpl.h"

static char tmp_path[64];

static const char *write_tmp(const char *text)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/kbv-render-tmpl-%ld.json", (long)getpid());
    FILE *f = fopen(tmp_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return tmp_path;
}

/* A valid template with one replaceable piece, so that each test changes
 * exactly one thing. */
static char *template_with(const char *title, const char *forest_caption, const char *extra_section)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"title\": \"%s\", \"subtitle\": \"s\",\n"
             " \"labels\": {\"speedup_axis\": \"a\", \"fast_p_x\": \"a\", \"fast_p_y\": \"a\", \"memory_axis\": \"a\",\n"
             "   \"scatter_x\": \"a\", \"count_axis\": \"a\", \"inflation_axis\": \"a\", \"open_marker\": \"a\",\n"
             "   \"filled_marker\": \"a\", \"page\": \"{{page}}/{{pages}}\", \"continued\": \"c\"},\n"
             " \"verdict\": {\"sentence\": \"{{set}} {{fp32_verdict}}\", \"no_correct\": \"{{set}}\", \"above\": \"a\",\n"
             "   \"below\": \"b\", \"overlap\": \"o\", \"same\": \"and\", \"differ\": \"but\"},\n"
             " \"sections\": [{\"id\": \"headline\", \"title\": \"H\"},\n"
             "   {\"id\": \"forest\", \"title\": \"F\", \"caption\": \"%s\"}%s]}\n",
             title, forest_caption, extra_section);
    return buf;
}

static void test_expand(void **state)
{
    (void)state;
    tmpl t = {0};
    t.path = "report.json";
    tvars v = {0};
    tvars_set(&v, "x", "%d", 42);
    tvars_set(&v, "name", "%s", "tuned");
    char *out = NULL;
    kbv_err e = {0};
    assert_int_equal(tmpl_expand(&t, "f", "a {{x}} b {{name}}{{x}}", &v, &out, &e), 0);
    assert_string_equal(out, "a 42 b tuned42");
    free(out);
    assert_int_equal(tmpl_expand(&t, "sections[hacks].caption", "n = {{nope}}", &v, &out, &e), KBV_EINPUT);
    assert_null(out);
    assert_non_null(strstr(e.msg, "{{nope}}"));
    assert_non_null(strstr(e.msg, "report.json"));
    assert_non_null(strstr(e.msg, "sections[hacks].caption"));
    assert_int_equal(tmpl_expand(&t, "f", "broken {{x", &v, &out, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "malformed"));
    assert_int_equal(tmpl_expand(&t, "f", "{{ x }}", &v, &out, &e), KBV_EINPUT);
    assert_int_equal(tmpl_expand(&t, "f", "stray }}", &v, &out, &e), KBV_EINPUT);
    /* Single braces are text. */
    assert_int_equal(tmpl_expand(&t, "f", "{a} {x}", &v, &out, &e), 0);
    assert_string_equal(out, "{a} {x}");
    free(out);
}

static void test_load_shipped(void **state)
{
    (void)state;
    tmpl t;
    kbv_err e = {0};
    int rc = tmpl_load(&t, "templates/report.json", &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(t.n_sections, SEC_N);
    assert_int_equal(t.sections[0].id, SEC_SUMMARY);
    tmpl_free(&t);
    rstyle s;
    rc = style_load(&s, "templates/style.json", &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_true(s.fs_small < s.fs_normal && s.fs_normal < s.fs_large);
    assert_true(s.n_set_styles >= 8);
    /* Every set style differs from the others in colour and in marker. */
    for (int i = 0; i < s.n_set_styles; i++)
        for (int j = 0; j < i; j++) {
            assert_int_not_equal(s.set_mark[i], s.set_mark[j]);
            assert_false(s.set_color[i].r == s.set_color[j].r && s.set_color[i].g == s.set_color[j].g &&
                         s.set_color[i].b == s.set_color[j].b);
        }
}

static void expect_error(const char *text, const char *needle1, const char *needle2)
{
    tmpl t;
    kbv_err e = {0};
    const char *p = write_tmp(text);
    assert_int_equal(tmpl_load(&t, p, &e), KBV_EINPUT);
    if (!strstr(e.msg, p))
        fail_msg("message does not name the file: %s", e.msg);
    if (needle1 && !strstr(e.msg, needle1))
        fail_msg("message lacks '%s': %s", needle1, e.msg);
    if (needle2 && !strstr(e.msg, needle2))
        fail_msg("message lacks '%s': %s", needle2, e.msg);
    unlink(p);
}

static void test_load_errors(void **state)
{
    (void)state;
    tmpl t;
    kbv_err e = {0};
    /* The base template is valid, and {{set}} is known in a forest caption. */
    const char *p = write_tmp(template_with("T {{run_id}}", "{{set}} n={{set_n}}", ""));
    int rc = tmpl_load(&t, p, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(t.n_sections, 2);
    tmpl_free(&t);
    expect_error(template_with("T {{runid}}", "c", ""), "{{runid}}", "title");
    expect_error(template_with("T", "{{set}} {{bogus_name}}", ""), "{{bogus_name}}", "sections[forest].caption");
    /* {{set}} has no meaning in the document title. */
    expect_error(template_with("T {{set}}", "c", ""), "{{set}}", "title");
    expect_error(template_with("T", "c", ", {\"id\": \"appendix\", \"title\": \"A\"}"), "appendix", NULL);
    expect_error(template_with("T", "c", ", {\"id\": \"forest\", \"title\": \"again\"}"), "twice", NULL);
    /* The methods section's items: global placeholders only, and only there. */
    expect_error(template_with("T", "c", ", {\"id\": \"methods\", \"title\": \"M\", \"items\": "
                                         "[{\"term\": \"t\", \"text\": \"{{set}}\"}]}"),
                 "{{set}}", "sections[methods].items[0]");
    expect_error(template_with("T", "c", ", {\"id\": \"hacks\", \"title\": \"H\", \"items\": []}"),
                 "methods section only", NULL);
    expect_error(template_with("T", "c", ", {\"id\": \"methods\", \"title\": \"M\", \"items\": "
                                         "[{\"term\": \"t\"}]}"),
                 "text", "items[0]");
    expect_error(template_with("T", "c", ", {\"id\": \"hacks\", \"title\": \"H\", \"colour\": \"x\"}"), "colour", NULL);
    /* {{baseline}} belongs to a fast_p figure, not to the fast_p table. */
    p = write_tmp(template_with("T", "c", ", {\"id\": \"fast_p\", \"title\": \"P\", \"figure_caption\": \"vs {{baseline}}\"}"));
    rc = tmpl_load(&t, p, &e);
    if (rc)
        fail_msg("%s", e.msg);
    tmpl_free(&t);
    expect_error(template_with("T", "c", ", {\"id\": \"fast_p\", \"title\": \"P\", \"caption\": \"vs {{baseline}}\"}"),
                 "{{baseline}}", "sections[fast_p].caption");
    expect_error("{\"title\": \"T\",\n  \"subtitle\": }\n", NULL, NULL);
    expect_error("[1, 2]", "object", NULL);
}

static void test_style_errors(void **state)
{
    (void)state;
    rstyle s;
    kbv_err e = {0};
    char *text = NULL;
    size_t n = 0;
    FILE *f = fopen("templates/style.json", "r");
    assert_non_null(f);
    text = calloc(1, 1 << 16);
    n = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    assert_true(n > 0);
    char *bad = malloc(n + 64);
    /* A colour that is not a colour. */
    char *c = strstr(text, "\"#1a1a1a\"");
    assert_non_null(c);
    memcpy(bad, text, (size_t)(c - text));
    strcpy(bad + (c - text), "\"black\"");
    strcat(bad, c + strlen("\"#1a1a1a\""));
    const char *p = write_tmp(bad);
    assert_int_equal(style_load(&s, p, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "colors.text"));
    /* An unknown key is named. */
    c = strstr(text, "\"margin\"");
    assert_non_null(c);
    memcpy(bad, text, (size_t)(c - text));
    strcpy(bad + (c - text), "\"margins\"");
    strcat(bad, c + strlen("\"margin\""));
    p = write_tmp(bad);
    assert_int_equal(style_load(&s, p, &e), KBV_EINPUT);
    assert_non_null(strstr(e.msg, "page.margins"));
    unlink(p);
    free(bad);
    free(text);
}

static void test_formats(void **state)
{
    (void)state;
    char b[64];
    rm_est x = {1, 1.8349, 1.6049, 2.0451, 12};
    assert_string_equal(fmt_ratio(b, sizeof b, &x), "1.83x");
    assert_string_equal(fmt_ci(b, sizeof b, &x), "[1.60, 2.05]");
    assert_string_equal(fmt_range(b, sizeof b, &x), "1.60\xe2\x80\x93" "2.05");
    assert_string_equal(fmt_est_ci(b, sizeof b, &x), "1.83 [1.60, 2.05]");
    rm_est none = {0, NAN, NAN, NAN, 0};
    assert_string_equal(fmt_ratio(b, sizeof b, &none), "n/a");
    assert_string_equal(fmt_est_ci(b, sizeof b, &none), "n/a");
    assert_string_equal(fmt_2(b, sizeof b, 0.125), "0.12");   /* 0.125 is exact: round half to even */
    /* Below 0.095 two significant digits: a tiny speedup is not "0.00". */
    assert_string_equal(fmt_2(b, sizeof b, 0.00617), "0.0062");
    assert_string_equal(fmt_2(b, sizeof b, 0.0), "0.00");
    rm_est tiny = {1, 0.0042, 0.004, 0.0044, -1};
    assert_string_equal(fmt_ratio(b, sizeof b, &tiny), "0.0042x");
    assert_string_equal(fmt_ci(b, sizeof b, &tiny), "[0.004, 0.0044]");
    assert_string_equal(fmt_ms(b, sizeof b, 0.123456), "0.1235");
    assert_string_equal(fmt_mib(b, sizeof b, 3.0 * 1048576), "3.0");
    assert_string_equal(fmt_g(b, sizeof b, 0.1), "0.1");
    fmt_g(b, sizeof b, 1.0 / 3);
    assert_true(strtod(b, NULL) == 1.0 / 3);
    assert_string_equal(fmt_g(b, sizeof b, NAN), "");
    /* 16 digits where 15 do not read back and 16 do (as Python prints it). */
    assert_string_equal(fmt_g(b, sizeof b, 0.8934753171648698), "0.8934753171648698");
}

static void test_tables(void **state)
{
    (void)state;
    tbl t;
    kbv_err e = {0};
    const char *head[] = {"set_name", "value"};
    assert_int_equal(tbl_init(&t, 2, head, "lr", &e), 0);
    const char *r1[] = {"a,b", "say \"hi\""};
    const char *r2[] = {"50% & #1_x", "1.83\n[1.60, 2.05]"};
    assert_int_equal(tbl_add(&t, r1, 0, 0, &e), 0);
    assert_int_equal(tbl_add(&t, r2, 0, 1, &e), 0);
    sbuf csv = {0}, tex = {0};
    tbl_csv(&t, &csv);
    assert_string_equal(csv.s, "set_name,value\n\"a,b\",\"say \"\"hi\"\"\"\n50% & #1_x,\"1.83\n[1.60, 2.05]\"\n");
    tbl_tex(&t, "a caption", &tex);
    /* p{} columns that share the line width, text wrapping; a line break of
     * a cell kept; a break allowed after '_'. */
    assert_non_null(strstr(tex.s, "\\begin{tabular}{@{}>{\\raggedright\\arraybackslash}p{\\dimexpr "));
    assert_non_null(strstr(tex.s, ">{\\raggedleft\\arraybackslash}p{\\dimexpr "));
    assert_non_null(strstr(tex.s, "@{}}\n\\toprule\nset\\_\\allowbreak{}name & value \\\\\n\\midrule\n"));
    assert_non_null(strstr(tex.s, "50\\% \\& \\#1\\_\\allowbreak{}x & 1.83\\newline{}[1.60, 2.05] \\\\\n"));
    assert_non_null(strstr(tex.s, "\\bottomrule\n\\end{tabular}\\par\n}\n"));
    assert_null(strstr(tex.s, "longtable"));
    /* The second row starts a group: a rule above it. */
    assert_non_null(strstr(tex.s, "\\\\\n\\midrule\n50"));
    sbuf esc = {0};
    tex_escape(&esc, "a~b^c\\d{e}$\xe2\x80\x93");
    assert_string_equal(esc.s, "a\\textasciitilde{}b\\textasciicircum{}c\\textbackslash{}d\\{e\\}\\$--");
    sb_free(&esc);
    /* A word broken for a narrow PDF column is whole again in LaTeX. */
    tex_escape(&esc, "incor-\nrect up-\ndated x\ny");
    assert_string_equal(esc.s, "incorrect updated x y");
    sb_free(&esc);
    /* A long table is a longtable, its header repeated on every page. */
    for (int i = 0; i < 30; i++)
        assert_int_equal(tbl_add(&t, r1, 0, 0, &e), 0);
    sb_free(&tex);
    tbl_tex(&t, NULL, &tex);
    assert_non_null(strstr(tex.s, "\\begin{longtable}{@{}"));
    assert_non_null(strstr(tex.s, "\\endfirsthead\n\\toprule\nset"));
    assert_non_null(strstr(tex.s, "\\endhead\n\\bottomrule\n\\endlastfoot\n"));
    assert_non_null(strstr(tex.s, "\\end{longtable}\n}\n"));
    sb_free(&csv);
    sb_free(&tex);
    tbl_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_load_shipped),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_style_errors),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
