/* ort_bind.c — the inputs of a call as ONNX Runtime values, and its outputs
 * as rpxprof tensors. Each rpx_inputs (setup's, every sample's) is checked
 * against the model's inputs by name — dtype, rank, every fixed dimension —
 * and wrapped once (CreateTensorWithDataAsOrtValue over rpxprof's own bytes,
 * no copy), before the timed calls; a call then finds its set by pointer.
 * Outputs are ORT's own buffers of the last Run, read after it and released
 * in after_call, both outside the timed span. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/npz.h"
#include "runtimes/ort/ort_internal.h"

static void shape_text(char *buf, size_t size, int ndim, const int64_t *dims, char *const *sym)
{
    size_t n = 0;
    int d;
    n += (size_t)snprintf(buf + n, size - n, "[");
    for (d = 0; d < ndim && n < size; d++) {
        if (dims[d] >= 0)
            n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? ", " : "", (long long)dims[d]);
        else
            n += (size_t)snprintf(buf + n, size - n, "%s%s", d ? ", " : "",
                                  sym && sym[d] ? sym[d] : "?");
    }
    if (n < size) snprintf(buf + n, size - n, "]");
}

static int check_input(ort_state *s, const ort_io *io, const rpx_tensor *t, rpx_error *err)
{
    char want[256], got[256];
    int d, ok = io->type && rpx__ort_dtype_from(io->type) == (int)t->dtype;
    if (io->ndim >= 0) {
        ok = ok && io->ndim == t->ndim;
        for (d = 0; ok && d < io->ndim; d++) ok = io->dims[d] < 0 || io->dims[d] == t->shape[d];
    }
    if (ok) return 0;
    if (io->ndim >= 0)
        shape_text(want, sizeof want, io->ndim, io->dims, io->sym);
    else
        snprintf(want, sizeof want, "(any shape)");
    shape_text(got, sizeof got, t->ndim, t->shape, NULL);
    return rpx_error_set(err, RPX_EINVAL,
                         "--model %s: input '%s': the model expects %s %s, the inputs give %s %s; "
                         "give an array of that dtype and shape in --inputs",
                         s->model, io->name, io->type ? rpx__ort_type_name(io->type) : "a non-tensor",
                         want, rpx_dtype_name(t->dtype), got);
}

static int names_of(const ort_state *s, char *buf, size_t size)
{
    size_t i, n = 0;
    buf[0] = '\0';
    for (i = 0; i < s->n_in && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s'%s'", i ? ", " : "", s->in[i].name);
    return 0;
}

static int make_values(ort_state *s, const rpx_inputs *inputs, OrtValue **v, rpx_error *err)
{
    size_t i, k;
    char names[512];
    for (i = 0; i < inputs->count; i++) {
        for (k = 0; k < s->n_in && strcmp(s->in[k].name, inputs->tensors[i].name) != 0; k++) {}
        if (k == s->n_in) {
            names_of(s, names, sizeof names);
            return rpx_error_set(err, RPX_EINVAL,
                                 "--model %s: the inputs give '%s', which the model has not; its "
                                 "inputs are %s",
                                 s->model, inputs->tensors[i].name, names);
        }
    }
    for (k = 0; k < s->n_in; k++) {
        const rpx_tensor *t = rpx_inputs_find(inputs, s->in[k].name);
        OrtStatus *st;
        int rc;
        if (!t) {
            names_of(s, names, sizeof names);
            return rpx_error_set(err, RPX_EINVAL,
                                 "--model %s: input '%s' is missing from the inputs; the model's "
                                 "inputs are %s",
                                 s->model, s->in[k].name, names);
        }
        if ((rc = check_input(s, &s->in[k], t, err)) != 0) return rc;
        /* ORT never writes an input: the cast drops const for its signature only */
        st = s->api.CreateTensorWithDataAsOrtValue(s->mem, (void *)(uintptr_t)t->data, t->nbytes,
                                                   t->shape, (size_t)t->ndim, s->in[k].type, &v[k]);
        if (st) return rpx__ort_fail(&s->api, st, err, RPX_EINVAL, s->in[k].name);
    }
    return 0;
}

static void bound_release(ort_state *s, ort_bound *b)
{
    size_t k;
    for (k = 0; b->values && k < s->n_in; k++)
        if (b->values[k]) s->api.ReleaseValue(b->values[k]);
    free(b->values);
    memset(b, 0, sizeof *b);
}

OrtValue **rpx__ort_bind(ort_state *s, const rpx_inputs *inputs, rpx_error *err)
{
    const void *first = inputs && inputs->count ? inputs->tensors[0].data : NULL;
    ort_bound *b;
    size_t i;
    for (i = 0; i < s->n_bound; i++)
        if (s->bound[i].key == inputs && s->bound[i].first_data == first) return s->bound[i].values;
    if (!inputs) {
        rpx_error_set(err, RPX_EINVAL, "--model %s: no inputs given", s->model);
        return NULL;
    }
    /* a new set: kept while there is room, else it replaces the last one */
    if (s->n_bound < ORT_MAX_BOUND)
        b = &s->bound[s->n_bound++];
    else
        bound_release(s, b = &s->bound[ORT_MAX_BOUND - 1]);
    b->values = calloc(s->n_in + 1, sizeof *b->values);
    if (!b->values) {
        rpx_error_set(err, RPX_ENOMEM, "out of memory");
        s->n_bound--;
        return NULL;
    }
    if (make_values(s, inputs, b->values, err) != 0) {
        bound_release(s, b);
        s->n_bound--;
        return NULL;
    }
    b->key = inputs;
    b->first_data = first;
    return b->values;
}

void rpx__ort_bind_free(ort_state *s)
{
    size_t i;
    for (i = 0; i < s->n_bound; i++) bound_release(s, &s->bound[i]);
    s->n_bound = 0;
}

void rpx__ort_results_release(ort_state *s)
{
    size_t i;
    for (i = 0; s->results && i < s->n_out; i++)
        if (s->results[i]) {
            s->api.ReleaseValue(s->results[i]);
            s->results[i] = NULL;
        }
}

static int one_output(ort_state *s, size_t i, rpx_tensor *t, rpx_error *err)
{
    OrtTensorTypeAndShapeInfo *info = NULL;
    size_t nd = 0, k;
    int type = 0;
    void *data = NULL;
    OrtStatus *st = s->api.GetTensorTypeAndShape(s->results[i], &info);
    if (!st) st = s->api.GetTensorElementType(info, &type);
    if (!st) st = s->api.GetDimensionsCount(info, &nd);
    if (!st && nd <= RPX_MAX_DIMS) st = s->api.GetDimensions(info, t->shape, nd);
    if (info) s->api.ReleaseTensorTypeAndShapeInfo(info);
    if (st) return rpx__ort_fail(&s->api, st, err, RPX_EUNSUPPORTED, s->out[i].name);
    if (nd > RPX_MAX_DIMS || !rpx__ort_dtype_from(type))
        return rpx_error_set(err, RPX_EUNSUPPORTED,
                             "--model %s: output '%s' is %s with %zu dimensions, which "
                             "--check-outputs cannot compare",
                             s->model, s->out[i].name, rpx__ort_type_name(type), nd);
    t->name = s->out[i].name;
    t->dtype = (rpx_dtype)rpx__ort_dtype_from(type);
    t->ndim = (int)nd;
    t->count = 1;
    for (k = 0; k < nd; k++) t->count *= (size_t)t->shape[k];
    t->nbytes = t->count * rpx_dtype_size(t->dtype);
    if (t->nbytes && (st = s->api.GetTensorMutableData(s->results[i], &data)))
        return rpx__ort_fail(&s->api, st, err, RPX_EUNSUPPORTED, s->out[i].name);
    t->data = data;
    return 0;
}

int rpx__ort_outputs(ort_state *s, rpx_outputs *outputs, rpx_error *err)
{
    size_t i;
    int rc;
    for (i = 0; i < s->n_out; i++) {
        if (!s->results[i])
            return rpx_error_set(err, RPX_EINVAL, "--model %s: no call has run: no outputs yet",
                                 s->model);
        memset(&s->out_tensors[i], 0, sizeof s->out_tensors[i]);
        if ((rc = one_output(s, i, &s->out_tensors[i], err)) != 0) return rc;
    }
    outputs->count = s->n_out;
    outputs->tensors = s->out_tensors;
    return 0;
}
