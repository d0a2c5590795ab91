/* ort_layers.c — --layers through ONNX Runtime's own profiler. layers_begin
 * makes a second session of the same model and settings with profiling on
 * (EnableProfiling into a private temporary folder) and the optimised graph
 * saved beside it, runs it once (that run is dropped: its first-run
 * allocations are not the model's time), and points the calls at it; the
 * timed session is never profiled. layers_end ends profiling, reads ORT's
 * JSON (Chrome trace events: each Run is a "model_run" event of category
 * "Session", each node's kernel a "NODE_kernel_time" event of category
 * "Node" with `dur` in microseconds and args.op_name), assigns every node
 * event to the Run whose span holds it, maps each node to the model file's
 * nodes it covers (ort_graph.c), and deletes the files. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimes/ort/ort_internal.h"

static void remove_dir(char **dir)
{
    DIR *d;
    struct dirent *e;
    char path[PATH_MAX];
    if (!*dir) return;
    if ((d = opendir(*dir))) {
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                snprintf(path, sizeof path, "%s/%s", *dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(*dir);
    free(*dir);
    *dir = NULL;
}

void rpx__ort_layers_free(ort_state *s)
{
    if (s->prof) s->api.ReleaseSession(s->prof);
    s->prof = NULL;
    s->active = s->session;
    remove_dir(&s->prof_dir);
    json_decref(s->node_map);
    s->node_map = NULL;
}

int rpx__ort_layers_begin(void *state, rpx_error *err)
{
    ort_state *s = state;
    OrtSessionOptions *o = NULL;
    OrtStatus *st = NULL;
    char tmpl[PATH_MAX], prefix[PATH_MAX], optimised[PATH_MAX];
    const char *tmp = getenv("TMPDIR");
    int rc = 0, save;
    if (!s->session || s->n_bound == 0)
        return rpx_error_set(err, RPX_EINVAL, "--layers: the ONNX Runtime session has no inputs yet");
    rpx__ort_layers_free(s);
    snprintf(tmpl, sizeof tmpl, "%s/rpxprof-ort-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl))
        return rpx_error_set(err, RPX_EIO, "--layers: cannot make a folder %s: %s", tmpl,
                             strerror(errno));
    if (!(s->prof_dir = strdup(tmpl))) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    snprintf(prefix, sizeof prefix, "%s/profile", s->prof_dir);
    snprintf(optimised, sizeof optimised, "%s/optimised.onnx", s->prof_dir);
    /* with the optimised graph saved; where ORT cannot save it (a model over
     * protobuf's 2 GB), without: nodes are then named but not mapped */
    for (save = 1; save >= 0 && rc == 0 && !s->prof; save--) {
        if ((rc = rpx__ort_session_options(s, &o, err)) != 0) break;
        st = s->api.EnableProfiling(o, prefix);
        if (!st && save) st = s->api.SetOptimizedModelFilePath(o, optimised);
        if (!st) st = s->api.CreateSession(s->env, s->model, o, &s->prof);
        s->api.ReleaseSessionOptions(o);
        o = NULL;
        if (st && save) {
            s->api.ReleaseStatus(st);
            st = NULL;
        }
    }
    if (o) s->api.ReleaseSessionOptions(o);
    if (rc == 0 && st) rc = rpx__ort_fail(&s->api, st, err, RPX_EUNAVAILABLE,
                                          "--layers: ONNX Runtime's profiling session");
    if (rc == 0) {
        /* the dropped first run (layers_end skips the first model_run) */
        OrtValue **in = s->bound[0].values;
        rpx__ort_results_release(s); /* Run would write into values left there */
        st = s->api.Run(s->prof, NULL, s->in_names, (const OrtValue *const *)in, s->n_in,
                        s->out_names, s->n_out, s->results);
        rpx__ort_results_release(s);
        if (st) rc = rpx__ort_fail(&s->api, st, err, RPX_EMODEL, "--layers: ONNX Runtime: Run");
    }
    if (rc != 0) {
        rpx__ort_layers_free(s);
        return rc;
    }
    if (access(optimised, R_OK) != 0 ||
        rpx__ort_node_map(s->model, optimised, &s->node_map, NULL) != 0)
        s->node_map = NULL; /* every event's nodes: null */
    s->active = s->prof;
    return 0;
}

static int ends_with(const char *s, const char *suffix, size_t *stem)
{
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m || strcmp(s + n - m, suffix) != 0) return 0;
    *stem = n - m;
    return 1;
}

/* The Runs (their start and end in µs), in order of start. */
static int cmp_run(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static json_t *events_of(ort_state *s, json_t *trace, rpx_error *err)
{
    json_t *list = json_is_array(trace) ? trace : json_object_get(trace, "traceEvents");
    json_t *out = json_array(), *e;
    double *runs = NULL;
    size_t n_runs = 0, i, r;
    if (!json_is_array(list)) {
        json_decref(out);
        rpx_error_set(err, RPX_EFORMAT, "--layers: ONNX Runtime's profile is not a list of events");
        return NULL;
    }
    runs = calloc(2 * json_array_size(list) + 2, sizeof *runs);
    if (!runs || !out) {
        free(runs);
        json_decref(out);
        rpx_error_set(err, RPX_ENOMEM, "out of memory");
        return NULL;
    }
    json_array_foreach(list, i, e) {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        const char *name = json_string_value(json_object_get(e, "name"));
        if (cat && name && strcmp(cat, "Session") == 0 && strcmp(name, "model_run") == 0) {
            runs[2 * n_runs] = json_number_value(json_object_get(e, "ts"));
            runs[2 * n_runs + 1] = runs[2 * n_runs] + json_number_value(json_object_get(e, "dur"));
            n_runs++;
        }
    }
    qsort(runs, n_runs, 2 * sizeof *runs, cmp_run);
    json_array_foreach(list, i, e) {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *op = json_string_value(json_object_get(json_object_get(e, "args"), "op_name"));
        double ts = json_number_value(json_object_get(e, "ts"));
        size_t stem;
        json_t *nodes;
        char node[512];
        if (!cat || !name || strcmp(cat, "Node") != 0 || !ends_with(name, "_kernel_time", &stem))
            continue;
        for (r = 0; r < n_runs && !(ts >= runs[2 * r] && ts <= runs[2 * r + 1]); r++) {}
        if (r == 0 || r == n_runs) continue; /* the dropped first run, or outside every run */
        snprintf(node, sizeof node, "%.*s", (int)stem, name);
        nodes = s->node_map ? json_object_get(s->node_map, node) : NULL;
        json_array_append_new(
            out, json_pack("{s:I, s:s, s:o, s:O, s:f}", "call", (json_int_t)(r - 1), "name", node,
                           "op_type", op ? json_string(op) : json_null(), "nodes",
                           nodes ? nodes : json_null(), "time_ms",
                           json_number_value(json_object_get(e, "dur")) / 1e3));
    }
    free(runs);
    return out;
}

int rpx__ort_layers_end(void *state, json_t **events, rpx_error *err)
{
    ort_state *s = state;
    char *file = NULL;
    json_t *trace;
    json_error_t jerr;
    OrtStatus *st;
    int rc = 0;
    *events = NULL;
    s->active = s->session;
    if (!s->prof) return rpx_error_set(err, RPX_EINVAL, "--layers: layers_end without layers_begin");
    st = s->api.SessionEndProfiling(s->prof, s->alloc, &file);
    if (st) {
        rc = rpx__ort_fail(&s->api, st, err, RPX_EUNAVAILABLE, "--layers: ONNX Runtime: EndProfiling");
    } else {
        trace = json_load_file(file, 0, &jerr);
        if (!trace)
            rc = rpx_error_set(err, RPX_EFORMAT, "--layers: ONNX Runtime's profile %s: %s (line %d)",
                               file, jerr.text, jerr.line);
        else if (!(*events = events_of(s, trace, err)))
            rc = err->code ? err->code : RPX_EFORMAT;
        json_decref(trace);
        unlink(file);
        s->api.AllocatorFree(s->alloc, file);
    }
    rpx__ort_layers_free(s);
    return rc;
}
