/* model_file.c — owns what a run of a model file (a kind with
 * RPX_KIND_RUNTIME: `--model resnet50.onnx`, docs/runtimes.md) needs before
 * anything is measured and what its report adds: the runtime resolved once
 * (a refusal, e.g. --runtime ort without ONNX Runtime's library, before any
 * process starts), the ONNX file costed as with --cost, and, with no --inputs,
 * the inputs made from the model's own: an ONNX graph's inputs with their
 * shapes bound as `rpxprof cost` binds them (--shape NAME=DIMS, --dim
 * NAME=N), a TorchScript file's from --shape; seeded random data of each
 * input's dtype, as `rpxprof inputs make ... NAME=SHAPE:DTYPE=random` makes
 * them. The report's `inputs_generated` says how. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/kinds.h"
#include "rpxprof/cost.h"
#include "rpxprof/npz.h"
#include "runner/runner_internal.h"

#define MODEL_INPUTS_MAX 64

/* "1x3x224x224" from a JSON shape; -1 when a dimension is not known */
static int dims_text(const json_t *shape, char *buf, size_t size)
{
    size_t i, at = 0;
    json_t *d;
    if (!json_is_array(shape)) return -1;
    if (json_array_size(shape) == 0) return snprintf(buf, size, "scalar"), 0;
    buf[0] = '\0';
    json_array_foreach(shape, i, d) {
        if (!json_is_integer(d) || json_integer_value(d) < 0) return -1;
        at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%lld", i ? "x" : "",
                               (long long)json_integer_value(d));
    }
    return at < size ? 0 : -1;
}

/* The ONNX graph's inputs, bound as the cost binds them: NAME=DIMS:DTYPE each. */
static int graph_specs(const rpx_runner_config *c, char specs[][512], size_t *n, rpx_error *err)
{
    rpx_cost_options co;
    rpx_cost *cost = NULL;
    json_t *j, *in;
    size_t i;
    int rc;
    rpx_cost_options_init(&co);
    co.input_shapes = c->bind_inputs;
    co.n_input_shapes = c->n_bind_inputs;
    co.dims = c->bind_dims;
    co.n_dims = c->n_bind_dims;
    if ((rc = rpx_cost_analyze_onnx(c->model, &co, &cost, err)) != 0) return rc;
    j = rpx_cost_json(cost, 0);
    rpx_cost_free(cost);
    if (!j) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    *n = 0;
    json_array_foreach(json_object_get(json_object_get(j, "model"), "inputs"), i, in) {
        const char *name = json_string_value(json_object_get(in, "name"));
        const char *dtype = json_string_value(json_object_get(in, "dtype"));
        char dims[256];
        if (*n == MODEL_INPUTS_MAX) break;
        if (dims_text(json_object_get(in, "shape"), dims, sizeof dims) != 0) {
            rc = rpx_error_set(err, RPX_EINVAL,
                               "--model %s: input '%s' has a dimension that is not known; give "
                               "its shape (--shape %s=1x3x224x224) or bind the dimension "
                               "(--dim NAME=N), or give --inputs FILE.npz",
                               c->model, name ? name : "?", name ? name : "NAME");
            break;
        }
        snprintf(specs[(*n)++], 512, "%s=%s:%s", name ? name : "", dims, dtype ? dtype : "float32");
    }
    json_decref(j);
    return rc;
}

/* A TorchScript file says no shapes: one --shape NAME=DIMS[:DTYPE] per input. */
static int shape_specs(const rpx_runner_config *c, char specs[][512], size_t *n, rpx_error *err)
{
    size_t i;
    *n = 0;
    if (c->n_bind_inputs == 0)
        return rpx_error_set(err, RPX_EINVAL,
                             "--model %s: a TorchScript file does not say its inputs' shapes; "
                             "give one --shape NAME=DIMS per input (--shape x=1x3x224x224; "
                             "NAME=DIMS:DTYPE for other than float32), or --inputs FILE.npz",
                             c->model);
    for (i = 0; i < c->n_bind_inputs && i < MODEL_INPUTS_MAX; i++) {
        const char *eq = strchr(c->bind_inputs[i], '=');
        snprintf(specs[(*n)++], 512, "%s%s", c->bind_inputs[i],
                 eq && strchr(eq, ':') ? "" : ":float32");
    }
    return 0;
}

/* The NPZ file of the specs, random from `seed`, in the temporary folder. */
static int make_inputs(model_file_prep *m, char specs[][512], size_t n, uint64_t seed,
                       rpx_error *err)
{
    rpx_npz_maker *mk = NULL;
    const char *tmp = getenv("TMPDIR");
    size_t i;
    int fd, rc = 0;
    if (rpx_npz_maker_create(seed, &mk) != 0) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    for (i = 0; i < n && rc == 0; i++) {
        char spec[520];
        snprintf(spec, sizeof spec, "%s=random", specs[i]);
        if (rpx_npz_maker_add(mk, spec, err) != 0)
            rc = rpx_error_set(err, RPX_EINVAL, "the inputs made for the model: %s", err->message);
    }
    snprintf(m->inputs_path, sizeof m->inputs_path, "%s/rpxprof-inputs-XXXXXX.npz",
             tmp && *tmp ? tmp : "/tmp");
    if (rc == 0 && (fd = mkstemps(m->inputs_path, 4)) < 0)
        rc = rpx_error_set(err, RPX_EIO, "%s: cannot make the inputs' temporary file",
                           m->inputs_path);
    else if (rc == 0) {
        close(fd);
        m->made = 1;
        rc = rpx_npz_maker_write(mk, m->inputs_path, 0, err);
    }
    rpx_npz_maker_free(mk);
    return rc;
}

/* The report's inputs_generated: how the inputs were made, and the command
 * that makes the same bytes. */
static json_t *generated_json(const rpx_runner_config *c, const model_file_prep *m,
                              char specs[][512], size_t n, uint64_t seed)
{
    json_t *g = json_object(), *arrays = json_array();
    char cmd[4096];
    size_t i, at;
    at = (size_t)snprintf(cmd, sizeof cmd, "rpxprof inputs make inputs.npz");
    for (i = 0; i < n; i++) {
        char name[256], dims[256], dtype[32];
        const char *eq = strchr(specs[i], '='), *colon = eq ? strrchr(eq, ':') : NULL;
        json_t *a = json_object();
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - specs[i]) : 0, specs[i]);
        snprintf(dims, sizeof dims, "%.*s", eq && colon ? (int)(colon - eq - 1) : 0, eq ? eq + 1 : "");
        snprintf(dtype, sizeof dtype, "%s", colon ? colon + 1 : "float32");
        json_object_set_new(a, "name", json_string(name));
        json_object_set_new(a, "dtype", json_string(dtype));
        json_object_set_new(a, "shape", json_string(dims));
        json_array_append_new(arrays, a);
        if (at < sizeof cmd) at += (size_t)snprintf(cmd + at, sizeof cmd - at, " %s=random", specs[i]);
    }
    if (at < sizeof cmd) snprintf(cmd + at, sizeof cmd - at, " --seed %llu", (unsigned long long)seed);
    json_object_set_new(g, "from", json_string(m->choice.graph
                                                   ? "the ONNX graph's inputs, shapes bound as "
                                                     "rpxprof cost binds them (--shape, --dim)"
                                                   : "--shape"));
    json_object_set_new(g, "fill", json_string("random: floats uniform in [0, 1), integers "
                                               "uniform over the dtype's range, bool 0/1 "
                                               "(rpxprof inputs make)"));
    json_object_set_new(g, "seed", json_integer((json_int_t)seed));
    json_object_set_new(g, "arrays", arrays);
    json_object_set_new(g, "command", json_string(cmd));
    (void)c;
    return g;
}

/* Given inputs bind the graph's shapes (for its cost) by name: the first
 * sample's arrays, then --shape and --input, which win. */
static int bind_given(rpx_runner_config *c, model_file_prep *m, rpx_error *err)
{
    const char *first = c->inputs ? c->inputs : c->sample_files[0];
    const rpx_inputs *in;
    rpx_npz *npz = NULL;
    rpx_error ignored = {0};
    size_t i, n = 0;
    if (rpx_npz_load(first, &npz, &ignored) != 0) return 0; /* a folder: the cost binds as given */
    in = rpx_npz_inputs(npz);
    m->binds = calloc(in->count + c->n_bind_inputs + 1, sizeof *m->binds);
    if (!m->binds) {
        rpx_npz_free(npz);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    for (i = 0; i < in->count; i++) {
        const rpx_tensor *t = &in->tensors[i];
        char text[1024];
        size_t at = (size_t)snprintf(text, sizeof text, "%s=", t->name);
        int k;
        if (t->ndim == 0) continue; /* a scalar binds nothing */
        for (k = 0; k < t->ndim && at < sizeof text; k++)
            at += (size_t)snprintf(text + at, sizeof text - at, "%s%lld", k ? "x" : "",
                                   (long long)t->shape[k]);
        if (!(m->binds[n] = strdup(text))) break;
        n++;
    }
    int short_of_memory = i < in->count; /* `in` is the NPZ's: read before it is freed */
    rpx_npz_free(npz);
    if (short_of_memory) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    m->n_npz_binds = n;
    for (i = 0; i < c->n_bind_inputs; i++) m->binds[n++] = (char *)c->bind_inputs[i];
    c->bind_inputs = (const char *const *)m->binds;
    c->n_bind_inputs = n;
    return 0;
}

int rpx__model_file_prepare(rpx_runner_config *c, const rpx_kind *row, model_file_prep *m,
                            rpx_error *err)
{
    char (*specs)[512];
    size_t n = 0;
    uint64_t seed = c->target.model_seed;
    int rc;
    memset(m, 0, sizeof *m);
    if (!rpx__kind_has(row, RPX_KIND_RUNTIME) || !row->runtime || c->target.custom) return 0;
    if ((rc = row->runtime(c->model, &c->target, &m->choice, err)) != 0) return rc;
    m->on = 1;
    /* the file costed as with --cost, unless a cost was declared or given */
    if (m->choice.graph && !c->cost && !(c->flops == c->flops) && !(c->params == c->params))
        c->cost = c->model;
    if (c->inputs || c->n_sample_files) return m->choice.graph ? bind_given(c, m, err) : 0;
    if (!(specs = calloc(MODEL_INPUTS_MAX, sizeof *specs)))
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    rc = m->choice.graph ? graph_specs(c, specs, &n, err) : shape_specs(c, specs, &n, err);
    if (rc == 0 && n == 0)
        rc = rpx_error_set(err, RPX_EINVAL, "--model %s: the model has no inputs to make; give "
                           "--inputs FILE.npz", c->model);
    if (rc == 0) rc = make_inputs(m, specs, n, seed, err);
    if (rc == 0) {
        c->inputs = m->inputs_path;
        c->inputs_label = "<generated>";
        m->generated = generated_json(c, m, specs, n, seed);
    }
    free(specs);
    return rc;
}

void rpx__model_file_report(const model_file_prep *m, json_t *report)
{
    if (!m->on) return;
    json_object_set(report, "inputs_generated", m->generated ? m->generated : json_null());
}

void rpx__model_file_free(model_file_prep *m)
{
    size_t i;
    for (i = 0; i < m->n_npz_binds; i++) free(m->binds[i]);
    free(m->binds);
    if (m->made) unlink(m->inputs_path);
    json_decref(m->generated);
    memset(m, 0, sizeof *m);
}
