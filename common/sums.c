/* sums.c - RUN_DIR/SHA256SUMS (see sums.h). */
#include "sums.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "afile.h"
#include "sha.h"

/* The files collect measured; their lines are written by collect and merge
 * only. */
static const char *const raw_names[] = {"manifest.json", "samples.jsonl", "samples.jsonl.gz"};
#define N_RAW (sizeof raw_names / sizeof *raw_names)

static int is_raw(const char *rel)
{
    for (size_t i = 0; i < N_RAW; i++)
        if (strcmp(rel, raw_names[i]) == 0) return 1;
    return 0;
}

/* One line of SHA256SUMS. */
typedef struct sum_line {
    char *rel;     /* owned: the path */
    char *text;    /* owned: the whole line as read or made, without newline */
} sum_line;

typedef struct sum_list {
    sum_line *v;   /* owned */
    size_t n, cap;
} sum_list;

static void list_free(sum_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].rel);
        free(l->v[i].text);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int list_add(sum_list *l, const char *hex, const char *rel, const char *text, kbv_err *e)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        sum_line *p = realloc(l->v, cap * sizeof *p);
        if (!p) return err_set(e, KBV_ENOMEM, "out of memory");
        l->v = p;
        l->cap = cap;
    }
    sum_line *s = &l->v[l->n];
    s->rel = strdup(rel);
    if (text) {
        s->text = strdup(text);
    } else if ((s->text = malloc(strlen(hex) + strlen(rel) + 3))) {
        sprintf(s->text, "%s  %s", hex, rel);
    }
    if (!s->rel || !s->text) {
        free(s->rel);
        free(s->text);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    l->n++;
    return 0;
}

static void list_drop(sum_list *l, size_t i)
{
    free(l->v[i].rel);
    free(l->v[i].text);
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
    l->n--;
}

/* Reads run_dir/SHA256SUMS into l; *exists (may be NULL) says whether the
 * file was there (an absent file is an empty list then, else an error). */
static int list_load(const char *run_dir, sum_list *l, int *exists, kbv_err *e)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/SHA256SUMS", run_dir);
    if (exists) {
        *exists = lstat(path, &st) == 0;
        if (!*exists) return 0;
    }
    char *text = NULL;
    int rc = afile_read_all(path, &text, NULL, e);
    if (rc) return rc;
    long lineno = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        /* "<64 hex>  <path>"; sha256sum's binary marker "*" is accepted too. */
        if (strlen(line) < SHA_HEX_LEN + 3 || (line[SHA_HEX_LEN] != ' ') ||
            (line[SHA_HEX_LEN + 1] != ' ' && line[SHA_HEX_LEN + 1] != '*') ||
            strspn(line, "0123456789abcdef") != SHA_HEX_LEN) {
            rc = err_set(e, KBV_EINPUT, "%s:%ld: malformed line", path, lineno);
            break;
        }
        const char *rel = line + SHA_HEX_LEN + 2;
        if (rel[0] == '/' || strstr(rel, "..")) {
            rc = err_set(e, KBV_EINPUT, "%s:%ld: path '%s' leaves the run directory", path, lineno, rel);
            break;
        }
        for (size_t i = 0; i < l->n && !rc; i++)
            if (strcmp(l->v[i].rel, rel) == 0)
                rc = err_set(e, KBV_EINPUT, "%s:%ld: '%s' is listed twice", path, lineno, rel);
        if (rc || (rc = list_add(l, NULL, rel, line, e))) break;
    }
    free(text);
    return rc;
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const sum_line *)a)->rel, ((const sum_line *)b)->rel);
}

static int list_save(const char *run_dir, sum_list *l, kbv_err *e)
{
    char path[4096];
    afile *f = NULL;
    snprintf(path, sizeof path, "%s/SHA256SUMS", run_dir);
    qsort(l->v, l->n, sizeof *l->v, cmp_line);
    int rc = afile_open(&f, path, e);
    if (rc) return rc;
    for (size_t i = 0; i < l->n; i++) fprintf(afile_fp(f), "%s\n", l->v[i].text);
    return afile_commit(f, e);
}

/* Hashes run_dir/rel and adds its line. */
static int add_hashed(const char *run_dir, const char *rel, sum_list *l, kbv_err *e)
{
    char full[4096], hex[SHA_HEX_LEN + 1];
    snprintf(full, sizeof full, "%s/%s", run_dir, rel);
    int rc = sha_hex_file(full, hex, e);
    return rc ? rc : list_add(l, hex, rel, NULL, e);
}

/* Temporaries of afile ("*.tmp.<pid>"), render's staging folders and hidden
 * files are not part of a run. */
static int skipped(const char *name)
{
    return strstr(name, ".tmp.") != NULL || name[0] == '.';
}

/* Adds a line for every regular file under run_dir/rel (a folder). */
static int walk(const char *run_dir, const char *rel, sum_list *l, kbv_err *e)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", run_dir, rel);
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : err_set(e, KBV_ERUNTIME, "%s: %s", dir, strerror(errno));
    int rc = 0;
    struct dirent *ent;
    while (!rc && (ent = readdir(d))) {
        if (skipped(ent->d_name)) continue;
        char child[4096], full[4096];
        snprintf(child, sizeof child, "%s/%s", rel, ent->d_name);
        snprintf(full, sizeof full, "%s/%s", run_dir, child);
        struct stat st;
        if (lstat(full, &st) != 0) {
            rc = err_set(e, KBV_ERUNTIME, "%s: %s", full, strerror(errno));
            break;
        }
        if (S_ISDIR(st.st_mode)) rc = walk(run_dir, child, l, e);
        else if (S_ISREG(st.st_mode)) rc = add_hashed(run_dir, child, l, e);
    }
    closedir(d);
    return rc;
}

int sums_seal_raw(const char *run_dir, kbv_err *e)
{
    sum_list l = {0};
    int exists;
    int rc = list_load(run_dir, &l, &exists, e);
    for (size_t i = l.n; !rc && i-- > 0;)
        if (is_raw(l.v[i].rel)) list_drop(&l, i);
    for (size_t i = 0; !rc && i < N_RAW; i++) {
        char full[4096];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", run_dir, raw_names[i]);
        if (lstat(full, &st) == 0) rc = add_hashed(run_dir, raw_names[i], &l, e);
    }
    if (!rc) rc = list_save(run_dir, &l, e);
    list_free(&l);
    return rc;
}

/* Whether rel is output o, or lies under it when o names a folder. */
static int under(const char *rel, const char *o)
{
    size_t n = strlen(o);
    if (n && o[n - 1] == '/') return strncmp(rel, o, n) == 0;
    return strcmp(rel, o) == 0;
}

int sums_update(const char *run_dir, const char *const *outputs, size_t n, kbv_err *e)
{
    sum_list l = {0};
    int exists;
    int rc = list_load(run_dir, &l, &exists, e);
    for (size_t k = 0; !rc && k < n; k++) {
        if (is_raw(outputs[k])) {
            rc = err_set(e, KBV_EINPUT, "%s: %s is a raw file, sealed by collect", run_dir, outputs[k]);
            break;
        }
        for (size_t i = l.n; i-- > 0;)
            if (under(l.v[i].rel, outputs[k])) list_drop(&l, i);
        size_t len = strlen(outputs[k]);
        if (len && outputs[k][len - 1] == '/') {
            char rel[4096];
            snprintf(rel, sizeof rel, "%.*s", (int)(len - 1), outputs[k]);
            rc = walk(run_dir, rel, &l, e);
        } else {
            char full[4096];
            struct stat st;
            snprintf(full, sizeof full, "%s/%s", run_dir, outputs[k]);
            if (lstat(full, &st) == 0) rc = add_hashed(run_dir, outputs[k], &l, e);
        }
    }
    if (!rc) rc = list_save(run_dir, &l, e);
    list_free(&l);
    return rc;
}

int sums_verify(const char *run_dir, FILE *report, int *n_checked, kbv_err *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/SHA256SUMS", run_dir);
    sum_list l = {0};
    int rc = list_load(run_dir, &l, NULL, e);
    if (rc) return rc;
    int bad = 0;
    for (size_t i = 0; i < l.n; i++) {
        char full[4096], hex[SHA_HEX_LEN + 1];
        snprintf(full, sizeof full, "%s/%s", run_dir, l.v[i].rel);
        kbv_err ignored;
        struct stat st;
        if (lstat(full, &st) != 0) {
            bad++;
            if (report) fprintf(report, "%s: MISSING\n", l.v[i].rel);
        } else if (sha_hex_file(full, hex, &ignored) != 0 || memcmp(hex, l.v[i].text, SHA_HEX_LEN) != 0) {
            bad++;
            if (report) fprintf(report, "%s: FAILED\n", l.v[i].rel);
        } else if (report) {
            fprintf(report, "%s: OK\n", l.v[i].rel);
        }
    }
    if (n_checked) *n_checked = (int)l.n;
    if (l.n == 0) {
        rc = err_set(e, KBV_EINPUT, "%s: lists no file", path);
        goto done;
    }
    /* Every file in the run's root must be listed, and the raw files always
     * are: a line that is missing proves nothing about its file. */
    int unlisted = 0, unsealed = 0;
    DIR *d = opendir(run_dir);
    if (!d) {
        rc = err_set(e, KBV_EINPUT, "%s: %s", run_dir, strerror(errno));
        goto done;
    }
    struct dirent *ent;
    while ((ent = readdir(d))) {
        const char *nm = ent->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..") || !strcmp(nm, "SHA256SUMS") || !strcmp(nm, "SHA256SUMS.sig"))
            continue;
        char full[4096];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", run_dir, nm);
        if (lstat(full, &st) != 0 || S_ISDIR(st.st_mode)) continue;
        int listed = 0;
        for (size_t i = 0; i < l.n && !listed; i++) listed = strcmp(l.v[i].rel, nm) == 0;
        if (listed) continue;
        if (is_raw(nm)) unsealed++;
        else unlisted++;
        if (report) fprintf(report, "%s: NOT LISTED\n", nm);
    }
    closedir(d);
    int has_manifest = 0;
    for (size_t i = 0; i < l.n; i++) has_manifest |= strcmp(l.v[i].rel, "manifest.json") == 0;
    if (!has_manifest) {
        unsealed++;
        if (report) fprintf(report, "manifest.json: NOT LISTED\n");
    }
    if (bad)
        rc = err_set(e, KBV_EINPUT, "%s: %d of %zu files do not match", path, bad, l.n);
    else if (unsealed)
        rc = err_set(e, KBV_EINPUT,
                     "%s: does not list %d raw file%s (manifest.json, the journal): they were changed after "
                     "collect sealed them, or never sealed",
                     path, unsealed, unsealed == 1 ? "" : "s");
    else if (unlisted)
        rc = err_set(e, KBV_EINPUT, "%s: %d file%s in %s %s not listed", path, unlisted, unlisted == 1 ? "" : "s",
                     run_dir, unlisted == 1 ? "is" : "are");
done:
    list_free(&l);
    return rc;
}

/* --- signatures ----------------------------------------------------------- */

/* Loads a PEM key of type Ed25519 (private when priv is 1). */
static int load_key(const char *path, int priv, EVP_PKEY **out, kbv_err *e)
{
    char *text = NULL;
    size_t len = 0;
    int rc = afile_read_all(path, &text, &len, e);
    if (rc) return rc;
    BIO *b = BIO_new_mem_buf(text, (int)len);
    EVP_PKEY *k = NULL;
    if (b) k = priv ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
    BIO_free(b);
    free(text);
    if (!k)
        return err_set(e, KBV_EINPUT, "%s: not a PEM %s key", path, priv ? "private" : "public");
    if (EVP_PKEY_id(k) != EVP_PKEY_ED25519) {
        EVP_PKEY_free(k);
        return err_set(e, KBV_EINPUT, "%s: not an Ed25519 key (make one with: openssl genpkey -algorithm ed25519)",
                       path);
    }
    *out = k;
    return 0;
}

int sums_sign(const char *run_dir, const char *key_path, kbv_err *e)
{
    char path[4096], sig_path[4096];
    snprintf(path, sizeof path, "%s/SHA256SUMS", run_dir);
    snprintf(sig_path, sizeof sig_path, "%s/SHA256SUMS.sig", run_dir);
    EVP_PKEY *k = NULL;
    EVP_MD_CTX *md = NULL;
    char *text = NULL;
    size_t len = 0;
    unsigned char sig[64];
    char b64[128];
    int rc = load_key(key_path, 1, &k, e);
    if (rc) return rc;
    if ((rc = afile_read_all(path, &text, &len, e))) goto done;
    size_t sig_len = sizeof sig;
    if (!(md = EVP_MD_CTX_new()) || EVP_DigestSignInit(md, NULL, NULL, NULL, k) != 1 ||
        EVP_DigestSign(md, sig, &sig_len, (const unsigned char *)text, len) != 1) {
        rc = err_set(e, KBV_ERUNTIME, "%s: signing failed", path);
        goto done;
    }
    int n = EVP_EncodeBlock((unsigned char *)b64, sig, (int)sig_len);
    b64[n] = '\n';
    rc = afile_write_all(sig_path, b64, (size_t)n + 1, e);
done:
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(k);
    free(text);
    return rc;
}

int sums_check_sig(const char *run_dir, const char *pub_path, kbv_err *e)
{
    char path[4096], sig_path[4096];
    snprintf(path, sizeof path, "%s/SHA256SUMS", run_dir);
    snprintf(sig_path, sizeof sig_path, "%s/SHA256SUMS.sig", run_dir);
    EVP_PKEY *k = NULL;
    EVP_MD_CTX *md = NULL;
    char *text = NULL, *b64 = NULL;
    size_t len = 0, blen = 0;
    unsigned char sig[96];
    int rc = load_key(pub_path, 0, &k, e);
    if (rc) return rc;
    if ((rc = afile_read_all(sig_path, &b64, &blen, e))) goto done;
    while (blen && (b64[blen - 1] == '\n' || b64[blen - 1] == '\r')) blen--;
    /* 64 bytes are 88 base64 characters, two of them padding. */
    if (blen != 88 || EVP_DecodeBlock(sig, (const unsigned char *)b64, (int)blen) != 66) {
        rc = err_set(e, KBV_EINPUT, "%s: not an Ed25519 signature", sig_path);
        goto done;
    }
    if ((rc = afile_read_all(path, &text, &len, e))) goto done;
    if (!(md = EVP_MD_CTX_new()) || EVP_DigestVerifyInit(md, NULL, NULL, NULL, k) != 1) {
        rc = err_set(e, KBV_ERUNTIME, "%s: cannot verify", sig_path);
        goto done;
    }
    if (EVP_DigestVerify(md, sig, 64, (const unsigned char *)text, len) != 1)
        rc = err_set(e, KBV_EINPUT, "%s: the signature does not match SHA256SUMS under %s", sig_path, pub_path);
done:
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(k);
    free(text);
    free(b64);
    return rc;
}
