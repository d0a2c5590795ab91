/* sweep_capacity.c — owns `rpxprof sweep --vary rate=auto --slo 'p99<50ms'`:
 * the capacity search (rpxprof/capacity.h, through rpx__cli_capacity) with
 * every step's report kept as DIR/rate-R.json and made a point of
 * DIR/sweep.json (a step whose run was invalid is a point marked invalid with
 * the reason, never one of the curve's), and the search's block as
 * sweep.json's `capacity`. The steps run one after another: each rate is
 * decided from its own run before the next is chosen, so they cannot be
 * interleaved as the other sweeps' points are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/json.h"
#include "rpxprof/capacity.h"
#include "rpxprof/options.h"
#include "sweep/sweep.h"

#define MAX_STEPS 64

typedef struct kept {
    double rate[MAX_STEPS];
    json_t *report[MAX_STEPS];
    int step[MAX_STEPS];          /* its place in the capacity block's `search` (run order) */
    int n;
} kept;

static int keep(void *ud, double rate, const json_t *report)
{
    kept *k = ud;
    if (k->n == MAX_STEPS) return 0;
    k->rate[k->n] = rate;
    k->step[k->n] = k->n;
    k->report[k->n++] = json_incref((json_t *)report);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sweep.json's vary: the rates tried, ascending, once each */
static json_t *vary_of(const kept *k)
{
    double r[MAX_STEPS];
    json_t *v = json_object(), *values = json_array(), *a = json_array();
    int i, n = 0;
    for (i = 0; i < k->n; i++) r[i] = k->rate[i];
    qsort(r, (size_t)k->n, sizeof *r, cmp_double);
    for (i = 0; i < k->n; i++)
        if (i == 0 || r[i] != r[i - 1]) r[n++] = r[i];
    for (i = 0; i < n; i++) json_array_append_new(values, json_real(r[i]));
    json_object_set_new(v, "name", json_string("rate"));
    json_object_set_new(v, "kind", json_string("option"));
    json_object_set_new(v, "values", values);
    json_object_set_new(v, "direction", json_integer(1));
    json_array_append_new(a, v);
    return a;
}

/* the steps in order of rate (the search's order is in the capacity block) */
static void sort_steps(kept *k)
{
    int i, j;
    for (i = 1; i < k->n; i++)
        for (j = i; j > 0 && k->rate[j - 1] > k->rate[j]; j--) {
            double r = k->rate[j];
            json_t *t = k->report[j];
            int st = k->step[j];
            k->rate[j] = k->rate[j - 1], k->report[j] = k->report[j - 1];
            k->step[j] = k->step[j - 1];
            k->rate[j - 1] = r, k->report[j - 1] = t, k->step[j - 1] = st;
        }
}

static int write_points(const kept *k, const json_t *search, const char *out_dir,
                        rpx_sweep_point *pts, rpx_error *err)
{
    int i, rc;
    char path[4400];
    for (i = 0; i < k->n; i++) {
        rpx_sweep_point *p = &pts[i];
        int j, same = 0;
        for (j = 0; j < i; j++) same += k->rate[j] == k->rate[i];
        memset(p, 0, sizeof *p);
        p->value = json_real(k->rate[i]);
        p->index[0] = i;
        p->size = (double)NAN;
        p->items = 1;
        p->report = k->report[i];
        if (same) snprintf(p->label, sizeof p->label, "rate-%.4g-%d", k->rate[i], same + 1);
        else snprintf(p->label, sizeof p->label, "rate-%.4g", k->rate[i]);
        { /* the search's verdict on the run (its tolerance, not a plain run's) */
            const json_t *st = json_array_get(search, (size_t)k->step[i]);
            if (json_is_false(json_object_get(st, "valid")))
                snprintf(p->invalid_reason, sizeof p->invalid_reason, "%s",
                         json_string_value(json_object_get(st, "invalid_reason")));
        }
        snprintf(path, sizeof path, "%s/%s.json", out_dir, p->label);
        if ((rc = rpx_json_write_file(path, k->report[i], err)) != 0) return rc;
    }
    return 0;
}

int rpx__cli_sweep_capacity(const rpx_runner_config *cfg, const char *model, const char *inputs,
                            const char *slo, const char *out_dir, rpx_output *hout)
{
    rpx_runner_config c = *cfg;
    rpx_capacity_opts o;
    rpx_sweep_point *pts = NULL;
    rpx_error err = {0};
    kept k;
    json_t *cap = NULL, *sw = NULL, *vary = NULL;
    char path[4400];
    int rc, i;
    memset(&k, 0, sizeof k);
    rpx_capacity_opts_init(&o);
    c.model = model;
    c.inputs = inputs;
    c.spread = 0;
    if (!rpx_run_option_given(&c, rpx_run_option_find("processes"))) c.processes = 0;
    if (c.rate_hz > 0) o.start_rate = c.rate_hz; /* --rate R: where the search starts */
    if (c.target.load_duration_s > 0) o.min_duration_s = c.target.load_duration_s;
    if ((rc = rpx__cli_capacity("sweep", &c, slo, &o, 0, keep, &k, &cap)) != 0) goto out;
    rc = RPX_EXIT_FAILURE;
    if (!(pts = calloc((size_t)(k.n ? k.n : 1), sizeof *pts))) {
        rpx_cli_fail("sweep", 0, "out of memory");
        goto out;
    }
    sort_steps(&k);
    vary = vary_of(&k);
    if (write_points(&k, json_object_get(cap, "search"), out_dir, pts, &err) != 0 ||
        rpx_sweep_json(model, vary, NULL, pts, (size_t)k.n, &sw, &err) != 0) {
        rc = rpx_cli_fail("sweep", RPX_EXIT_FAILURE, "%s", err.message);
        goto out;
    }
    json_object_set(sw, "capacity", cap);
    snprintf(path, sizeof path, "%s/sweep.json", out_dir);
    if (rpx_json_write_file(path, sw, &err) != 0) {
        rc = rpx_cli_fail("sweep", RPX_EXIT_FAILURE, "%s", err.message);
        goto out;
    }
    printf("%s\n", json_string_value(json_object_get(cap, "sentence")));
    rc = 0;
    if (hout) {
        if (rpx__cli_html_sweep("sweep", hout, sw) != 0) rc = RPX_EXIT_EXTRA_OUTPUT;
        hout = NULL;
    }
    fprintf(stderr, "rpxprof sweep: %d step reports and %s kept\n", k.n, path);
out:
    rpx_output_discard(hout);
    for (i = 0; pts && i < k.n; i++) json_decref(pts[i].value);
    for (i = 0; i < k.n; i++) json_decref(k.report[i]);
    free(pts);
    json_decref(cap);
    json_decref(sw);
    json_decref(vary);
    return rc;
}
