#include "pins.h"

#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "jio.h"
#include "sha.h"

int pins_load(const char *path, pins_table *t, kbv_err *e)
{
    memset(t, 0, sizeof *t);
    char *text = NULL;
    size_t len = 0;
    int rc = afile_read_all(path, &text, &len, e);
    if (!rc) rc = sha_hex_buf(text, len, t->sha256, e);
    if (!rc) rc = jio_parse(text, len, path, &t->doc, e);
    free(text);
    if (rc) return rc;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(t->doc, "schema");
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(t->doc, "gpu");
    const cJSON *cublas = cJSON_GetObjectItemCaseSensitive(t->doc, "cublas");
    t->problems = cJSON_GetObjectItemCaseSensitive(t->doc, "problems");
    if (!cJSON_IsObject(t->doc) || !cJSON_IsString(schema) || strcmp(schema->valuestring, "kbv-pins/1") != 0)
        rc = err_set(e, KBV_EINPUT, "%s: not a kbv-pins/1 file", path);
    else if (!cJSON_IsString(gpu) || !cJSON_IsString(cublas) || !cJSON_IsObject(t->problems))
        rc = err_set(e, KBV_EINPUT, "%s: needs \"gpu\", \"cublas\" (strings) and \"problems\" (an object)", path);
    for (const cJSON *p = t->problems ? t->problems->child : NULL; !rc && p; p = p->next)
        if (!cJSON_IsString(p) || strchr(p->valuestring, ' ') || strlen(p->valuestring) > KBV_PINS_MAX)
            rc = err_set(e, KBV_EINPUT, "%s: problem %.80s: pins must be one string without spaces, at most 64 KiB", path,
                         p->string ? p->string : "?");
    if (rc) pins_free(t);
    return rc;
}

void pins_match(pins_table *t, const cJSON *device)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(device, "name");
    const cJSON *cublas = cJSON_GetObjectItemCaseSensitive(device, "cublas");
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(t->doc, "gpu");
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(t->doc, "cublas");
    t->applies = cJSON_IsString(name) && cJSON_IsString(cublas) && cJSON_IsString(gpu) && cJSON_IsString(want) &&
                 strcmp(name->valuestring, gpu->valuestring) == 0 &&
                 strcmp(cublas->valuestring, want->valuestring) == 0;
}

const char *pins_for(const pins_table *t, const char *problem)
{
    if (!t->doc || !t->applies) return NULL;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(t->problems, problem);
    return cJSON_IsString(p) && p->valuestring[0] ? p->valuestring : NULL;
}

void pins_free(pins_table *t)
{
    cJSON_Delete(t->doc);
    memset(t, 0, sizeof *t);
}
