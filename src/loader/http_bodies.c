/* http_bodies.c — owns the request bodies that vary (http_bodies.h): reading
 * the template and the prompts, the order (file order, or a permutation from
 * the seed), the field set per request, the nonce, and how many distinct
 * bodies a run sent. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/http_bodies.h"
#include "common/user_file.h"

struct rpx_bodies {
    json_t *tmpl;                 /* the template (or --body's JSON), an object */
    json_t **prompts;             /* each line's value */
    size_t n;                     /* lines */
    size_t *order;                /* a position's line */
    size_t n_distinct;            /* distinct values among all lines */
    const char *tmpl_path, *prompts_path, *field, *nonce;
    int shuffled, repeat, prefix;
    unsigned long long seed;
    long first;                   /* bodies of the processes before this one */
    long sent;                    /* bodies made by this process: the one made for the next
                                     request is not sent yet */
    unsigned long long pid;
};

static int is_blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    return *s == '\0';
}

static int push_prompt(rpx_bodies *b, json_t *v, size_t *cap)
{
    if (b->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        json_t **p = realloc(b->prompts, nc * sizeof *p);
        if (!p) return -1;
        b->prompts = p;
        *cap = nc;
    }
    b->prompts[b->n++] = v;
    return 0;
}

static int read_prompts(rpx_bodies *b, rpx_error *err)
{
    FILE *f = NULL;
    char *line = NULL, label[4200];
    size_t lcap = 0, cap = 0, i, j;
    long no = 0;
    ssize_t got;
    struct stat st;
    if (stat(b->prompts_path, &st) == 0 && S_ISDIR(st.st_mode)) /* read as empty otherwise */
        return rpx_error_set(err, RPX_EUSAGE, "--prompts %s: is a folder; give a JSON Lines "
                             "file, one prompt (a JSON value) a line", b->prompts_path);
    snprintf(label, sizeof label, "--prompts %s", b->prompts_path);
    /* a FIFO would block the open, a device or a huge file would grow us without end */
    if (rpx__user_file_bounded(b->prompts_path, label, RPX_USER_FILE_MAX_BYTES, err) != 0)
        return RPX_EUSAGE;
    f = fopen(b->prompts_path, "r");
    if (!f)
        return rpx_error_set(err, RPX_EUSAGE, "--prompts %s: cannot open it (%s); give a JSON Lines "
                             "file, one prompt (a JSON value) a line", b->prompts_path, strerror(errno));
    while ((got = getline(&line, &lcap, f)) != -1) {
        json_error_t je;
        json_t *v;
        no++;
        if (is_blank(line)) continue;
        v = json_loads(line, JSON_DECODE_ANY, &je);
        if (!v) {
            fclose(f);
            free(line);
            return rpx_error_set(err, RPX_EUSAGE, "--prompts %s: line %ld is not JSON (%s); give one "
                                 "JSON value a line, e.g. \"a prompt\" or {\"prompt\": \"...\"}",
                                 b->prompts_path, no, je.text);
        }
        if (push_prompt(b, v, &cap) != 0) {
            json_decref(v);
            fclose(f);
            free(line);
            return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        }
    }
    fclose(f);
    free(line);
    if (b->n == 0)
        return rpx_error_set(err, RPX_EUSAGE, "--prompts %s: no prompt in it; give one JSON value a "
                             "line", b->prompts_path);
    b->n_distinct = 0;
    for (i = 0; i < b->n; i++) {
        for (j = 0; j < i; j++)
            if (json_equal(b->prompts[i], b->prompts[j])) break;
        if (j == i) b->n_distinct++;
    }
    return 0;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Sets the dotted path (object keys; a number indexes an array) in `root` to
 * v (stolen): 0, or -1 and why. Missing objects on the way are made. */
static int set_path(json_t *root, const char *path, json_t *v, char *why, size_t size)
{
    char buf[512], *p, *dot;
    json_t *cur = root;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        snprintf(why, size, "the path is too long");
        json_decref(v);
        return -1;
    }
    p = buf;
    for (;;) {
        char *end;
        unsigned long idx;
        dot = strchr(p, '.');
        if (dot) *dot = '\0';
        idx = strtoul(p, &end, 10);
        if (json_is_array(cur) && *p && !*end) {
            if (idx >= json_array_size(cur)) {
                snprintf(why, size, "'%.100s' is past the end of an array of %zu", p, json_array_size(cur));
                json_decref(v);
                return -1;
            }
            if (!dot) return json_array_set_new(cur, idx, v) == 0 ? 0 : -1;
            cur = json_array_get(cur, idx);
        } else if (json_is_object(cur)) {
            json_t *next;
            if (!dot) return json_object_set_new(cur, p, v) == 0 ? 0 : -1;
            next = json_object_get(cur, p);
            if (!next) {
                next = json_object();
                json_object_set_new(cur, p, next);
            }
            cur = next;
        } else {
            snprintf(why, size, "'%.100s' is inside a value that is neither an object nor an array", p);
            json_decref(v);
            return -1;
        }
        p = dot + 1;
    }
}

/* The value at the dotted path in `root` (borrowed), or NULL */
static json_t *get_path(json_t *root, const char *path)
{
    char buf[512], *p, *dot;
    json_t *cur = root;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return NULL;
    for (p = buf; cur; p = dot + 1) {
        char *end;
        unsigned long idx;
        dot = strchr(p, '.');
        if (dot) *dot = '\0';
        idx = strtoul(p, &end, 10);
        if (json_is_array(cur) && *p && !*end) cur = json_array_get(cur, idx);
        else if (json_is_object(cur)) cur = json_object_get(cur, p);
        else return NULL;
        if (!dot) return cur;
    }
    return NULL;
}

int rpx__bodies_open(const rpx_target_options *o, const char *fixed, size_t fixed_len, long first,
                     rpx_bodies **out, rpx_error *err)
{
    rpx_bodies *b;
    json_error_t je;
    int rc;
    *out = NULL;
    if (!o->body_template && !o->prompts_path && !o->nonce_field) return 0;
    if (!!o->body_template != !!o->prompts_path)
        return rpx_error_set(err, RPX_EUSAGE, "%s needs %s: the template's field --prompt-field is "
                             "set to each prompt in turn",
                             o->body_template ? "--body-template" : "--prompts",
                             o->body_template ? "--prompts FILE.jsonl" : "--body-template FILE");
    if (!(b = calloc(1, sizeof *b))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    b->tmpl_path = o->body_template;
    b->prompts_path = o->prompts_path;
    b->field = o->prompt_field ? o->prompt_field : "prompt";
    b->nonce = o->nonce_field;
    b->shuffled = o->prompts_sample;
    b->repeat = o->body_repeat;
    b->prefix = o->nonce_prefix;
    b->seed = o->load_seed;
    b->first = first > 0 ? first : 0;
    b->pid = (unsigned long long)getpid();
    if (o->body_template) {
        char label[4200];
        snprintf(label, sizeof label, "--body-template %s", o->body_template);
        if (rpx__user_file_bounded(o->body_template, label, RPX_USER_FILE_MAX_BYTES, err) != 0) {
            rc = RPX_EUSAGE;
            goto fail;
        }
        b->tmpl = json_load_file(o->body_template, 0, &je);
        if (!b->tmpl) {
            rc = rpx_error_set(err, RPX_EUSAGE, "--body-template %s: not valid JSON (line %d: %s); "
                               "give a JSON object, the request's body", o->body_template, je.line, je.text);
            goto fail;
        }
        if ((rc = read_prompts(b, err)) != 0) goto fail;
    } else if (fixed) {
        b->tmpl = json_loadb(fixed, fixed_len, 0, &je);
        if (!b->tmpl) {
            rc = rpx_error_set(err, RPX_EUSAGE, "--nonce %s: the body is not JSON (%s), so there is "
                               "no field to put a nonce in; give --body a JSON object, or "
                               "--body-template FILE --prompts FILE.jsonl", o->nonce_field, je.text);
            goto fail;
        }
    } else {
        rc = rpx_error_set(err, RPX_EUSAGE, "--nonce %s needs a JSON body: give --body FILE (a JSON "
                           "object) or --body-template FILE --prompts FILE.jsonl", o->nonce_field);
        goto fail;
    }
    if (!json_is_object(b->tmpl) && !json_is_array(b->tmpl)) {
        rc = rpx_error_set(err, RPX_EUSAGE, "%s %s: the body is not a JSON object, so there is no "
                           "field to set; give an object", o->body_template ? "--body-template" : "--body",
                           o->body_template ? o->body_template : o->body_path ? o->body_path : "");
        goto fail;
    }
    {
        size_t i;
        if (!(b->order = malloc((b->n ? b->n : 1) * sizeof *b->order))) {
            rc = rpx_error_set(err, RPX_ENOMEM, "out of memory");
            goto fail;
        }
        for (i = 0; i < b->n; i++) b->order[i] = i;
        if (b->shuffled && b->n > 1) { /* Fisher-Yates from the seed */
            uint64_t s = b->seed;
            for (i = b->n - 1; i > 0; i--) {
                size_t j = (size_t)(splitmix(&s) % (i + 1)), t = b->order[i];
                b->order[i] = b->order[j];
                b->order[j] = t;
            }
        }
    }
    /* each field settable: one trial body, so a bad path fails before any request */
    {
        size_t len;
        char *t = rpx__bodies_next(b, &len);
        b->sent = 0;
        if (!t) {
            rc = rpx_error_set(err, RPX_EUSAGE, "%s%s%s: cannot be set in the body; give a dotted path "
                               "of object keys (numbers index arrays), e.g. prompt or messages.0.content",
                               b->prompts_path ? "--prompt-field " : "--nonce ",
                               b->prompts_path ? b->field : b->nonce,
                               b->prompts_path && b->nonce ? " or --nonce" : "");
            goto fail;
        }
        free(t);
    }
    *out = b;
    return 0;
fail:
    rpx__bodies_free(b);
    return rc;
}

char *rpx__bodies_next(rpx_bodies *b, size_t *len)
{
    json_t *body = json_deep_copy(b->tmpl);
    char why[256], *text;
    long k = b->repeat ? 0 : b->first + b->sent;
    if (!body) return NULL;
    if (b->n) {
        json_t *v = json_deep_copy(b->prompts[b->order[(size_t)k % b->n]]);
        if (!v || set_path(body, b->field, v, why, sizeof why) != 0) {
            json_decref(body);
            return NULL;
        }
    }
    if (b->nonce) {
        char nonce[96];
        json_t *old = b->prefix ? get_path(body, b->nonce) : NULL, *v;
        snprintf(nonce, sizeof nonce, "rpx-%llu-%ld-%llx", b->pid, b->repeat ? 0 : k,
                 (unsigned long long)(b->repeat ? 0 : b->seed));
        if (json_is_string(old)) {
            size_t ln = strlen(nonce), lo = json_string_length(old);
            char *cat = malloc(ln + 1 + lo);
            if (!cat) {
                json_decref(body);
                return NULL;
            }
            memcpy(cat, nonce, ln);
            cat[ln] = ' ';
            memcpy(cat + ln + 1, json_string_value(old), lo);
            v = json_stringn(cat, ln + 1 + lo);
            free(cat);
        } else {
            v = json_string(nonce);
        }
        if (!v || set_path(body, b->nonce, v, why, sizeof why) != 0) {
            json_decref(body);
            return NULL;
        }
    }
    text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(body);
    if (text) {
        *len = strlen(text);
        b->sent++;
    }
    return text;
}

json_t *rpx__bodies_json(const rpx_bodies *b)
{
    long total = b->first + (b->sent > 0 ? b->sent - 1 : 0);
    size_t distinct;
    json_t *o = json_object();
    if (b->repeat) {
        distinct = b->sent > 0 ? 1 : 0;
    } else if (b->nonce) {
        distinct = (size_t)total;
    } else if ((size_t)total >= b->n) {
        distinct = b->n_distinct;
    } else { /* the distinct values among the first `total` positions */
        size_t i, j;
        distinct = 0;
        for (i = 0; i < (size_t)total; i++) {
            for (j = 0; j < i; j++)
                if (json_equal(b->prompts[b->order[i]], b->prompts[b->order[j]])) break;
            if (j == i) distinct++;
        }
    }
    json_object_set_new(o, "template", b->tmpl_path ? json_string(b->tmpl_path) : json_null());
    json_object_set_new(o, "prompts", b->prompts_path ? json_string(b->prompts_path) : json_null());
    json_object_set_new(o, "prompt_field", b->prompts_path ? json_string(b->field) : json_null());
    json_object_set_new(o, "order", json_string(b->repeat ? "first only (cache audit)"
                                                : b->shuffled ? "shuffled" : "cycled"));
    json_object_set_new(o, "seed", b->shuffled ? json_integer((json_int_t)b->seed) : json_null());
    json_object_set_new(o, "nonce_field", b->nonce ? json_string(b->nonce) : json_null());
    json_object_set_new(o, "prompts_lines", b->prompts_path ? json_integer((json_int_t)b->n) : json_null());
    json_object_set_new(o, "prompts_distinct",
                        b->prompts_path ? json_integer((json_int_t)b->n_distinct) : json_null());
    json_object_set_new(o, "sent", json_integer(total));
    json_object_set_new(o, "distinct", json_integer((json_int_t)distinct));
    return o;
}

void rpx__bodies_free(rpx_bodies *b)
{
    size_t i;
    if (!b) return;
    for (i = 0; i < b->n; i++) json_decref(b->prompts[i]);
    free(b->prompts);
    free(b->order);
    json_decref(b->tmpl);
    free(b);
}

size_t rpx_http_distinct_bodies(const rpx_target_options *o)
{
    rpx_bodies *b = NULL;
    rpx_error e = {0};
    size_t n;
    if (o->nonce_field) return SIZE_MAX;
    if (!o->body_template || !o->prompts_path) return 1;
    if (rpx__bodies_open(o, NULL, 0, 0, &b, &e) != 0 || !b) return 0;
    n = b->n_distinct;
    rpx__bodies_free(b);
    return n;
}

int rpx__bodies_fixed_nonce(const rpx_target_options *o, const char **field, int *prefix,
                            char *how, size_t how_size, char *why, size_t why_size)
{
    json_error_t je;
    json_t *body, *at;
    const char *pf = o->prompt_field ? o->prompt_field : "prompt";
    if (!o->body_path) {
        snprintf(why, why_size, "the body is not JSON (%s), so the audit cannot make distinct "
                 "bodies; give --body FILE (a JSON object), or --body-template FILE --prompts "
                 "FILE.jsonl", o->inputs_path ? "the inputs' NPZ bytes" : "no --body");
        return -1;
    }
    body = json_load_file(o->body_path, 0, &je);
    if (!json_is_object(body)) {
        snprintf(why, why_size, "--body %s is not a JSON object (%s), so the audit cannot put a "
                 "unique value in each body; give --body-template FILE --prompts FILE.jsonl "
                 "(distinct prompts)", o->body_path, body ? "another JSON value" : je.text);
        json_decref(body);
        return -1;
    }
    at = get_path(body, pf);
    if (json_is_string(at)) {
        *field = pf;
        *prefix = 1;
        snprintf(how, how_size, "a unique value put before the prompt field '%s' of --body", pf);
    } else {
        *field = "rpxprof_nonce";
        *prefix = 0;
        snprintf(how, how_size, "a unique value in the top-level field 'rpxprof_nonce' of --body "
                 "(it has no string at '%s'; a cache keyed on the prompt alone is not defeated)", pf);
    }
    json_decref(body);
    return 0;
}
