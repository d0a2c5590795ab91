/* spec_file.c — owns the GPU spec table object: the built-in entries plus the
 * ones users add or override with JSON files ({"gpus": [{...}]}, from
 * --gpu-spec FILE or $RPX_GPU_SPECS), their validation, and finding an entry
 * by key or by a detected device name. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json_keys.h"
#include "rpxprof/error.h"
#include "rpxprof/roofline.h"

#define NKEYS(a) (sizeof(a) / sizeof(a)[0])
static const char *const top_keys[] = {"gpus"};
static const char *const entry_keys[] = {
    "key",     "name",         "vendor",    "architecture",          "source",
    "notes",   "memory_gb",    "sm_count",  "memory_bandwidth_gbps", "boost_clock_mhz",
    "l2_mb",   "tdp_w",        "peak_tflops", "match"};
static const char *const unit_keys[] = {"tensor", "vector"};

typedef struct user_spec {
    rpx_gpu_spec spec;
    char *source_owned;
    char *match_owned;
} user_spec;

typedef struct entry {
    const rpx_gpu_spec *spec;
    int user;
} entry;

struct rpx_gpu_table {
    entry *entries;
    size_t n, cap;
    user_spec **owned;
    size_t n_owned, cap_owned;
    json_t **roots;
    size_t n_roots, cap_roots;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    void *np;
    size_t c = *cap ? *cap : 16;
    if (need <= *cap) return 0;
    while (c < need) c *= 2;
    np = realloc(*p, c * elem);
    if (!np) return -1;
    *p = np;
    *cap = c;
    return 0;
}

int rpx_gpu_table_create(rpx_gpu_table **out)
{
    rpx_gpu_table *t = calloc(1, sizeof *t);
    size_t i, n = rpx_gpu_builtin_count();
    *out = NULL;
    if (!t || grow((void **)&t->entries, &t->cap, n, sizeof(entry))) {
        free(t);
        return RPX_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        t->entries[i].spec = rpx_gpu_builtin_at(i);
        t->entries[i].user = 0;
    }
    t->n = n;
    *out = t;
    return 0;
}

static void user_spec_free(user_spec *u)
{
    if (!u) return;
    free(u->source_owned);
    free(u->match_owned);
    free(u);
}

void rpx_gpu_table_free(rpx_gpu_table *t)
{
    size_t i;
    if (!t) return;
    for (i = 0; i < t->n_owned; i++) user_spec_free(t->owned[i]);
    for (i = 0; i < t->n_roots; i++) json_decref(t->roots[i]);
    free(t->owned);
    free(t->roots);
    free(t->entries);
    free(t);
}

size_t rpx_gpu_table_count(const rpx_gpu_table *t)
{
    return t ? t->n : 0;
}

const rpx_gpu_spec *rpx_gpu_table_at(const rpx_gpu_table *t, size_t index)
{
    return t && index < t->n ? t->entries[index].spec : NULL;
}

/* lower-case letters and digits only: "A100-80GB" -> "a100 80gb" -> "a10080gb" */
static void squash(const char *s, char *out, size_t len)
{
    size_t n = 0;
    for (; s && *s && n + 1 < len; s++)
        if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')) out[n++] = *s;
        else if (*s >= 'A' && *s <= 'Z') out[n++] = (char)(*s - 'A' + 'a');
    out[n] = '\0';
}

static const char *unvendor(const char *squashed)
{
    static const char *vendors[] = {"nvidiageforce", "nvidia", "amd", "intel"};
    size_t i;
    for (i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
        if (!strncmp(squashed, vendors[i], strlen(vendors[i]))) return squashed + strlen(vendors[i]);
    return squashed;
}

/* the entries that a name given by a user could mean: exact names first, then
 * names (with or without the vendor) and keys equal to it once case, spaces
 * and punctuation are ignored */
static size_t name_candidates(const rpx_gpu_table *t, const char *what, const rpx_gpu_spec **out,
                              size_t max)
{
    char w[128], nm[256];
    size_t i, n = 0;
    squash(what, w, sizeof w);
    for (i = 0; i < t->n && n < max; i++)
        if (t->entries[i].spec->name && strcasecmp(t->entries[i].spec->name, what) == 0)
            out[n++] = t->entries[i].spec;
    if (n || !*w) return n;
    for (i = 0; i < t->n && n < max; i++) {
        const rpx_gpu_spec *g = t->entries[i].spec;
        char k[128];
        squash(g->name, nm, sizeof nm);
        squash(g->key, k, sizeof k);
        if (!strcmp(nm, w) || !strcmp(unvendor(nm), unvendor(w)) || !strcmp(k, w)) out[n++] = g;
    }
    return n;
}

const rpx_gpu_spec *rpx_gpu_table_find(const rpx_gpu_table *t, const char *key)
{
    const rpx_gpu_spec *c[2];
    size_t i;
    if (!t || !key) return NULL;
    for (i = 0; i < t->n; i++)
        if (strcasecmp(t->entries[i].spec->key, key) == 0) return t->entries[i].spec;
    return name_candidates(t, key, c, 2) == 1 ? c[0] : NULL;
}

size_t rpx_gpu_table_candidates(const rpx_gpu_table *t, const char *what, char *buf, size_t len)
{
    const rpx_gpu_spec *c[16];
    size_t n, i, used = 0;
    if (len) buf[0] = '\0';
    if (!t || !what) return 0;
    n = name_candidates(t, what, c, sizeof c / sizeof c[0]);
    for (i = 0; n > 1 && i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s (%s)", i ? ", " : "", c[i]->key,
                                 c[i]->name ? c[i]->name : "");
    return n;
}

const rpx_gpu_spec *rpx_gpu_table_match_name(const rpx_gpu_table *t, const char *name)
{
    int pass;
    if (!t || !name || !*name) return NULL;
    /* user entries first, then the built-in ones; in each, an exact name wins
     * over the most specific pattern */
    for (pass = 1; pass >= 0; pass--) {
        const rpx_gpu_spec *best = NULL;
        int best_score = 0;
        size_t i;
        for (i = 0; i < t->n; i++) {
            const rpx_gpu_spec *g = t->entries[i].spec;
            if (t->entries[i].user != pass) continue;
            if (strcasecmp(g->name, name) == 0 || strcasecmp(g->key, name) == 0) return g;
        }
        for (i = 0; i < t->n; i++) {
            const rpx_gpu_spec *g = t->entries[i].spec;
            int score;
            if (t->entries[i].user != pass || !g->match) continue;
            score = rpx_gpu_pattern_match(g->match, name);
            if (score > best_score) {
                best = g;
                best_score = score;
            }
        }
        if (best) return best;
    }
    return NULL;
}

/* ---- validation of user entries ---- */

typedef struct ctx {
    const char *origin;
    size_t index;
    const char *key;
    rpx_error *err;
} ctx;

static int bad(const ctx *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(const ctx *c, const char *field, const char *fmt, ...)
{
    char what[512], where[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (c->key)
        snprintf(where, sizeof where, "gpus[%zu] (key '%s')", c->index, c->key);
    else
        snprintf(where, sizeof where, "gpus[%zu]", c->index);
    if (field)
        return rpx_error_set(c->err, RPX_EFORMAT, "%s: %s: field '%s': %s", c->origin, where,
                             field, what);
    return rpx_error_set(c->err, RPX_EFORMAT, "%s: %s: %s", c->origin, where, what);
}

static const char *type_name(const json_t *v)
{
    return json_is_number(v) ? "a number" : rpx_json_type_name(v);
}

/* " did you mean 'NEAR'?" for a misspelt `name`, or "" */
static const char *did_you_mean(const char *name, const char *const *allowed, size_t n,
                                char *buf, size_t size)
{
    const char *near = rpx_json_nearest_key(name, allowed, n);
    if (!near) return "";
    snprintf(buf, size, " did you mean '%s'?", near);
    return buf;
}

/* Optional string field: NULL when absent or null. */
static int opt_string(const ctx *c, const json_t *o, const char *field, const char **out)
{
    const json_t *v = json_object_get(o, field);
    *out = NULL;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v)) return bad(c, field, "must be a string, got %s", type_name(v));
    *out = json_string_value(v);
    return 0;
}

/* Optional number ≥ 0 (> 0 when `positive`): NaN when absent or null. */
static int opt_number(const ctx *c, const json_t *o, const char *field, int positive,
                      const char *unit, double *out)
{
    const json_t *v = json_object_get(o, field);
    double d;
    *out = NAN;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v))
        return bad(c, field, "must be a %s number (%s), got %s",
                   positive ? "positive" : "non-negative", unit, type_name(v));
    d = json_number_value(v);
    if (!isfinite(d) || d < 0 || (positive && d == 0))
        return bad(c, field, "must be a %s number (%s), got %g",
                   positive ? "positive" : "non-negative", unit, d);
    *out = d;
    return 0;
}

static int valid_key(const char *k)
{
    if (!*k || strlen(k) > 64) return 0;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
              *k == '-' || *k == '_' || *k == '.'))
            return 0;
    return 1;
}

static int peak_value(const ctx *c, const char *field, const json_t *v, double *out)
{
    double d;
    *out = NAN;
    if (json_is_null(v)) return 0;
    if (!json_is_number(v))
        return bad(c, field, "must be a positive number (TFLOP/s, dense), null, or "
                   "{\"tensor\": N, \"vector\": N}, got %s", type_name(v));
    d = json_number_value(v);
    if (!isfinite(d) || d <= 0)
        return bad(c, field, "must be a positive number (TFLOP/s, dense), got %g; a precision "
                   "the GPU lacks is null, never 0", d);
    *out = d;
    return 0;
}

static int parse_peaks(const ctx *c, const json_t *o, rpx_gpu_spec *g)
{
    const json_t *peaks = json_object_get(o, "peak_tflops");
    const char *name;
    json_t *v;
    int p, u, any = 0, rc;
    for (p = 0; p < RPX_PREC_COUNT; p++)
        for (u = 0; u < RPX_UNIT_COUNT; u++) g->peak_tflops[p][u] = NAN;
    if (!peaks) return bad(c, "peak_tflops", "is missing; give e.g. {\"fp32\": 50, \"fp16\": 100}");
    if (!json_is_object(peaks))
        return bad(c, "peak_tflops", "must be an object {precision: TFLOP/s}, got %s",
                   type_name(peaks));
    json_object_foreach((json_t *)peaks, name, v) {
        static const char *const precs[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"};
        rpx_precision prec;
        char field[96], hint[96];
        snprintf(field, sizeof field, "peak_tflops.%s", name);
        if (rpx_precision_parse(name, &prec, NULL) != 0 ||
            strcmp(name, rpx_precision_name(prec)) != 0)
            return bad(c, field, "unknown precision;%s use fp64, fp32, tf32, fp16, bf16, fp8 or "
                       "int8", did_you_mean(name, precs, NKEYS(precs), hint, sizeof hint));
        if (json_is_object(v)) {
            const char *uname;
            json_t *uv;
            json_object_foreach(v, uname, uv) {
                char ufield[128];
                double d;
                int unit;
                snprintf(ufield, sizeof ufield, "%s.%s", field, uname);
                if (strcmp(uname, "tensor") == 0)
                    unit = RPX_UNIT_TENSOR;
                else if (strcmp(uname, "vector") == 0)
                    unit = RPX_UNIT_VECTOR;
                else
                    return bad(c, ufield, "unknown unit;%s use \"tensor\" or \"vector\"",
                               did_you_mean(uname, unit_keys, NKEYS(unit_keys), hint,
                                            sizeof hint));
                if ((rc = peak_value(c, ufield, uv, &d)) != 0) return rc;
                g->peak_tflops[prec][unit] = d;
                any |= !isnan(d);
            }
        } else {
            double d;
            if ((rc = peak_value(c, field, v, &d)) != 0) return rc;
            /* a plain number is the peak of every node at that precision */
            g->peak_tflops[prec][RPX_UNIT_TENSOR] = d;
            g->peak_tflops[prec][RPX_UNIT_VECTOR] = d;
            any |= !isnan(d);
        }
    }
    if (!any) return bad(c, "peak_tflops", "has no number; give at least one precision's peak");
    return 0;
}

static int parse_match(const ctx *c, const json_t *o, user_spec *u)
{
    const json_t *m = json_object_get(o, "match");
    size_t i, len = 0;
    if (!m || json_is_null(m)) return 0;
    if (json_is_string(m)) {
        u->match_owned = strdup(json_string_value(m));
        return u->match_owned ? 0 : RPX_ENOMEM;
    }
    if (!json_is_array(m))
        return bad(c, "match", "must be a string or an array of strings (device names or "
                   "token patterns), got %s", type_name(m));
    for (i = 0; i < json_array_size(m); i++) {
        const json_t *s = json_array_get(m, i);
        if (!json_is_string(s))
            return bad(c, "match", "item %zu must be a string, got %s", i, type_name(s));
        len += strlen(json_string_value(s)) + 1;
    }
    if (!len) return 0;
    u->match_owned = calloc(1, len + 1);
    if (!u->match_owned) return RPX_ENOMEM;
    for (i = 0; i < json_array_size(m); i++) {
        if (i) strcat(u->match_owned, "|");
        strcat(u->match_owned, json_string_value(json_array_get(m, i)));
    }
    return 0;
}

static int parse_entry(const ctx *c0, const json_t *o, user_spec **out)
{
    ctx c = *c0;
    user_spec *u;
    rpx_gpu_spec *g;
    const json_t *kv, *nv, *sm;
    int rc;
    *out = NULL;
    if (!json_is_object(o)) return bad(&c, NULL, "must be an object, got %s", type_name(o));
    kv = json_object_get(o, "key");
    {
        char where[160];
        if (json_is_string(kv))
            snprintf(where, sizeof where, "gpus[%zu] (key '%.64s')", c.index,
                     json_string_value(kv));
        else
            snprintf(where, sizeof where, "gpus[%zu]", c.index);
        if ((rc = rpx_json_check_keys(o, entry_keys, NKEYS(entry_keys), c.origin, where, c.err)))
            return rc;
    }
    if (!kv) return bad(&c, "key", "is missing; give a short id like \"lab-gpu\"");
    if (!json_is_string(kv)) return bad(&c, "key", "must be a string, got %s", type_name(kv));
    if (!valid_key(json_string_value(kv)))
        return bad(&c, "key", "'%s' is not a valid key; use letters, digits, '-', '_' or '.' "
                   "(at most 64)", json_string_value(kv));
    c.key = json_string_value(kv);
    nv = json_object_get(o, "name");
    if (!nv) return bad(&c, "name", "is missing; give the GPU's name");
    if (!json_is_string(nv))
        return bad(&c, "name", "has the wrong type: expected a non-empty string, got %s",
                   type_name(nv));
    if (!*json_string_value(nv)) return bad(&c, "name", "is empty; give the GPU's name");
    u = calloc(1, sizeof *u);
    if (!u) return RPX_ENOMEM;
    g = &u->spec;
    g->key = c.key;
    g->name = json_string_value(nv);
    g->sm_count = -1;
    if ((rc = opt_string(&c, o, "vendor", &g->vendor)) ||
        (rc = opt_string(&c, o, "architecture", &g->architecture)) ||
        (rc = opt_string(&c, o, "source", &g->source)) ||
        (rc = opt_string(&c, o, "notes", &g->notes)) ||
        (rc = opt_number(&c, o, "memory_gb", 1, "GB", &g->memory_gb)) ||
        (rc = opt_number(&c, o, "memory_bandwidth_gbps", 1, "GB/s", &g->memory_bandwidth_gbps)) ||
        (rc = opt_number(&c, o, "boost_clock_mhz", 1, "MHz", &g->boost_clock_mhz)) ||
        (rc = opt_number(&c, o, "l2_mb", 1, "MB", &g->l2_mb)) ||
        (rc = opt_number(&c, o, "tdp_w", 1, "W", &g->tdp_w)) || (rc = parse_peaks(&c, o, g)) ||
        (rc = parse_match(&c, o, u))) {
        user_spec_free(u);
        return rc;
    }
    if (isnan(g->memory_bandwidth_gbps)) {
        user_spec_free(u);
        return bad(&c, "memory_bandwidth_gbps", "is missing; give the memory bandwidth in GB/s");
    }
    sm = json_object_get(o, "sm_count");
    if (sm && !json_is_null(sm)) {
        if (!json_is_integer(sm) || json_integer_value(sm) < 0 ||
            json_integer_value(sm) > 1000000) {
            user_spec_free(u);
            if (json_is_integer(sm))
                return bad(&c, "sm_count", "must be a non-negative integer (SMs or CUs) up to "
                           "1000000, got %lld", (long long)json_integer_value(sm));
            return bad(&c, "sm_count", "has the wrong type: expected a non-negative integer "
                       "(SMs or CUs), got %s", rpx_json_type_name(sm));
        }
        g->sm_count = (int)json_integer_value(sm);
    }
    if (!g->source) {
        size_t n = strlen(c.origin) + 32;
        u->source_owned = malloc(n);
        if (!u->source_owned) {
            user_spec_free(u);
            return RPX_ENOMEM;
        }
        snprintf(u->source_owned, n, "user spec file %s", c.origin);
        g->source = u->source_owned;
    }
    g->match = u->match_owned;
    *out = u;
    return 0;
}

int rpx_gpu_table_load_json(rpx_gpu_table *t, const json_t *root, const char *origin,
                            rpx_error *err)
{
    const json_t *gpus;
    user_spec **parsed = NULL;
    size_t i, j, n;
    int rc = 0;
    ctx c;
    if (!t || !root) return rpx_error_set(err, RPX_EINVAL, "no table or no JSON");
    if (!origin) origin = "(spec)";
    if (!json_is_object(root))
        return rpx_error_set(err, RPX_EFORMAT,
                             "%s: expected an object {\"gpus\": [...]}, got %s", origin,
                             type_name(root));
    if ((rc = rpx_json_check_keys(root, top_keys, NKEYS(top_keys), origin, NULL, err)))
        return rc;
    gpus = json_object_get(root, "gpus");
    if (!gpus)
        return rpx_error_set(err, RPX_EFORMAT,
                             "%s: field 'gpus' is missing; give {\"gpus\": [{\"key\": ..., "
                             "\"name\": ..., ...}]}", origin);
    if (!json_is_array(gpus))
        return rpx_error_set(err, RPX_EFORMAT,
                             "%s: field 'gpus': has the wrong type: expected an array of GPU "
                             "entries, got %s", origin, type_name(gpus));
    n = json_array_size(gpus);
    parsed = calloc(n ? n : 1, sizeof *parsed);
    if (!parsed) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    c.origin = origin;
    c.err = err;
    for (i = 0; i < n && rc == 0; i++) {
        c.index = i;
        c.key = NULL;
        rc = parse_entry(&c, json_array_get(gpus, i), &parsed[i]);
        if (rc == RPX_ENOMEM) rpx_error_set(err, rc, "out of memory");
        for (j = 0; rc == 0 && j < i; j++) {
            if (strcasecmp(parsed[j]->spec.key, parsed[i]->spec.key) == 0) {
                c.key = parsed[i]->spec.key;
                rc = bad(&c, "key", "duplicates gpus[%zu]; a file names each key once", j);
            }
        }
    }
    if (rc == 0 &&
        (grow((void **)&t->owned, &t->cap_owned, t->n_owned + n, sizeof *t->owned) ||
         grow((void **)&t->entries, &t->cap, t->n + n, sizeof *t->entries) ||
         grow((void **)&t->roots, &t->cap_roots, t->n_roots + 1, sizeof *t->roots)))
        rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
    if (rc != 0) {
        for (i = 0; i < n; i++) user_spec_free(parsed[i]);
        free(parsed);
        return rc;
    }
    /* commit: keep the JSON alive (the entries' strings point into it) */
    t->roots[t->n_roots++] = json_incref((json_t *)root);
    for (i = 0; i < n; i++) {
        size_t k;
        t->owned[t->n_owned++] = parsed[i];
        for (k = 0; k < t->n; k++) {
            if (strcasecmp(t->entries[k].spec->key, parsed[i]->spec.key) == 0) break;
        }
        /* an override without its own patterns keeps matching the same devices */
        if (k < t->n && !parsed[i]->spec.match) parsed[i]->spec.match = t->entries[k].spec->match;
        t->entries[k].spec = &parsed[i]->spec;
        t->entries[k].user = 1;
        if (k == t->n) t->n++;
    }
    free(parsed);
    return 0;
}

int rpx_gpu_table_load_file(rpx_gpu_table *t, const char *path, rpx_error *err)
{
    json_t *root;
    int rc;
    if (!path || !*path) return rpx_error_set(err, RPX_EINVAL, "no GPU spec file named");
    rc = rpx_json_load_user_file(path, JSON_REJECT_DUPLICATES,
                                 "a GPU spec file ({\"gpus\": [...]}, docs/roofline.md)", &root,
                                 err);
    if (rc) return rc;
    rc = rpx_gpu_table_load_json(t, root, path, err);
    json_decref(root);
    return rc;
}

int rpx_gpu_table_load_env(rpx_gpu_table *t, rpx_error *err)
{
    const char *v = getenv("RPX_GPU_SPECS");
    char *copy, *tok, *save = NULL;
    int rc = 0;
    if (!v || !*v) return 0;
    copy = strdup(v);
    if (!copy) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (tok = strtok_r(copy, ":", &save); tok && rc == 0; tok = strtok_r(NULL, ":", &save)) {
        rc = rpx_gpu_table_load_file(t, tok, err);
        if (rc) rpx_error_prefix(err, "RPX_GPU_SPECS");
    }
    free(copy);
    return rc;
}
