/* kinds.c — owns the table of target kinds and the --model grammar read
 * through it: which row a text names (rpx_target_kind_name), its check
 * (rpx_target_check_spec) and the files a run of it reads
 * (rpx_target_files). Opening is target.c's, through the same match. Each
 * row lives in its kind's file; a new kind adds its row here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "loader/kinds.h"
#include "rpxprof/error.h"
#include "rpxprof/target.h"

/* The grammar tries the rows in this order; the last claims the rest. */
static const rpx_kind *const table[] = {
    &rpx__kind_http,
    &rpx__kind_model_file,
    &rpx__kind_shared_object,
    &rpx__kind_python,
};
#define N_KINDS (sizeof table / sizeof table[0])

const rpx_kind *const *rpx__kinds(size_t *n)
{
    *n = N_KINDS;
    return table;
}

static int has_scheme(const rpx_kind *k, const char *spec)
{
    const char *const *s;
    for (s = k->schemes; s && *s; s++)
        if (strncasecmp(spec, *s, strlen(*s)) == 0) return 1;
    return 0;
}

static int has_suffix(const rpx_kind *k, const char *spec)
{
    size_t n = strlen(spec), m;
    const char *const *s;
    for (s = k->suffixes; s && *s; s++)
        if ((m = strlen(*s)) < n && strcasecmp(spec + n - m, *s) == 0) return 1;
    return 0;
}

/* 2: by its URL scheme; 1: otherwise claimed; 0: not this row's */
static int claim(const rpx_kind *k, const char *spec)
{
    if (has_scheme(k, spec)) return 2;
    if (has_suffix(k, spec)) return 1;
    return k->claims && k->claims(spec);
}

int rpx__kind_claims(const rpx_kind *k, const char *spec)
{
    return spec ? claim(k, spec) : 0;
}

static const rpx_kind *match(const char *spec, int *by_scheme)
{
    size_t i;
    int c = 0;
    for (i = 0; i + 1 < N_KINDS; i++)
        if ((c = claim(table[i], spec)) != 0) break;
    if (i + 1 == N_KINDS) c = claim(table[i], spec); /* the last row claims the rest */
    if (by_scheme) *by_scheme = c == 2;
    return table[i];
}

const rpx_kind *rpx__kind_of_spec(const char *spec)
{
    return spec ? match(spec, NULL) : &rpx__kind_shared_object;
}

const rpx_kind *rpx__kind_find(const char *name)
{
    size_t i;
    for (i = 0; name && i < N_KINDS; i++)
        if (strcmp(table[i]->name, name) == 0) return table[i];
    return NULL;
}

const rpx_kind *rpx__kind_named(const char *name)
{
    const rpx_kind *k = rpx__kind_find(name);
    return k ? k : &rpx__kind_shared_object;
}

const rpx_kind *rpx__kind_of_target(const char *model, const rpx_target_options *opt)
{
    if (opt && opt->custom && opt->custom->kind_name) return rpx__kind_named(opt->custom->kind_name);
    return rpx__kind_of_spec(model);
}

const char *rpx_target_kind_name(const char *spec)
{
    return rpx__kind_of_spec(spec)->name;
}

/* "http:// and https://": every scheme a row claims */
static void schemes_words(char *buf, size_t size)
{
    const char *list[16];
    size_t i, n = 0, at = 0;
    const char *const *s;
    for (i = 0; i < N_KINDS; i++)
        for (s = table[i]->schemes; s && *s && n < 16; s++) list[n++] = *s;
    buf[0] = '\0';
    for (i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ",
                               list[i]);
}

/* The grammar common to every row, then the row's own check. */
int rpx__kind_match(const char *spec, const char *shown, const rpx_kind **kind, rpx_error *err)
{
    int by_scheme;
    if (!spec || !*spec)
        return rpx_error_set(err, RPX_EINVAL, "--model is empty; give " RPX_KIND_EXPECTED);
    *kind = match(spec, &by_scheme);
    if (!by_scheme && strstr(spec, "://")) {
        char words[256];
        schemes_words(words, sizeof words);
        return rpx_error_set(err, RPX_EUNSUPPORTED, "--model %s: only %s URLs are supported",
                             shown, words);
    }
    return (*kind)->check ? (*kind)->check(shown, err) : 0;
}

int rpx_target_check_spec(const char *spec, rpx_error *err)
{
    const rpx_kind *k;
    char *shown;
    int rc;
    if (!spec || !*spec) return rpx__kind_match(spec, spec, &k, err);
    shown = rpx_target_redact_spec(spec); /* it may hold credentials */
    if (!shown) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    rc = rpx__kind_match(spec, shown, &k, err);
    free(shown);
    return rc;
}

int rpx_target_files(const char *spec, char ***files, size_t *n_files, rpx_error *err)
{
    char buf[PATH_MAX], **list = NULL;
    size_t n = 0, i;
    const rpx_kind *k;
    int bad = 0;
    *files = NULL;
    *n_files = 0;
    if (!spec || !*spec) return 0;
    k = rpx__kind_of_spec(spec);
    if (k->plugin) bad = rpx__strv_push(&list, &n, rpx__plugin_path(k->plugin, buf, sizeof buf));
    if (!bad && k->files) bad = k->files(spec, &list, &n) != 0;
    if (bad) {
        for (i = 0; i < n; i++) free(list[i]);
        free(list);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    *files = list;
    *n_files = n;
    return 0;
}
