/* api.c — the public face of the cost layer: analysis entry points,
 * accessors, and rpx_cost_json (the object of `rpxprof cost --json`, attached
 * as `efficiency` by `rpxprof run --cost`; schemas/cost.json). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost_internal.h"
#include "common/json.h"

void rpx_cost_options_init(rpx_cost_options *o)
{
    memset(o, 0, sizeof *o);
}

static int precision_bits(const char *p)
{
    if (!p) return 0;
    if (!strcmp(p, "fp32")) return 32;
    if (!strcmp(p, "fp16") || !strcmp(p, "bf16")) return 16;
    if (!strcmp(p, "fp8") || !strcmp(p, "int8")) return 8;
    return -1;
}

static int analyze(rpx__ctx *c)
{
    size_t i;
    int rc;
    if ((rc = rpx__build(c))) return rc;
    if ((rc = rpx__bind_inputs(c))) return rc;
    for (i = 0; i < c->n_graphs; i++)
        if ((rc = rpx__toposort(c, (int)i))) return rc;
    if ((rc = rpx__analyze_graph(c, 0))) return rc;
    return rpx__totals(c);
}

static int start(const char *name, const rpx_cost_options *opt, rpx_cost **out, rpx_error *err,
                 rpx__ctx **cp)
{
    rpx__ctx *c;
    if (out) *out = NULL;
    if (err) rpx_error_clear(err);
    if (!name || !out) return rpx_error_set(err, RPX_EINVAL, "rpx_cost_analyze_onnx: no file or no output");
    c = calloc(1, sizeof *c);
    if (!c) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    c->err = err;
    c->path = rpx__strndup(&c->arena, name, strlen(name));
    if (!c->path) {
        free(c);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    if (opt) c->opt = *opt;
    c->precision_bits = precision_bits(c->opt.precision);
    if (c->precision_bits < 0) {
        int rc = rpx_error_set(err, RPX_EINVAL, "--precision '%s': expected fp32, fp16, bf16, fp8 or int8",
                               c->opt.precision);
        rpx_cost_free(c);
        return rc;
    }
    c->precision = c->opt.precision ? rpx__strndup(&c->arena, c->opt.precision, strlen(c->opt.precision)) : NULL;
    *cp = c;
    return 0;
}

static int finish(rpx__ctx *c, int rc, rpx_cost **out)
{
    /* option strings are the caller's: not kept past the call */
    c->opt.input_shapes = c->opt.dims = NULL;
    c->opt.n_input_shapes = c->opt.n_dims = 0;
    c->opt.precision = c->precision;
    if (rc) {
        rpx_cost_free(c);
        return rc;
    }
    c->err = NULL;
    *out = c;
    return 0;
}

int rpx_cost_analyze_onnx(const char *path, const rpx_cost_options *opt, rpx_cost **out,
                          rpx_error *err)
{
    rpx__ctx *c;
    int rc = start(path, opt, out, err, &c);
    if (rc) return rc;
    rc = rpx__load_file(c, path);
    if (!rc) rc = analyze(c);
    return finish(c, rc, out);
}

int rpx_cost_analyze_onnx_buffer(const void *data, size_t len, const char *name,
                                 const rpx_cost_options *opt, rpx_cost **out, rpx_error *err)
{
    rpx__ctx *c;
    int rc = start(name ? name : "(buffer)", opt, out, err, &c);
    if (rc) return rc;
    rc = data ? rpx__load_buffer(c, data, len) : rpx__fail(c, RPX_EINVAL, "no data");
    if (!rc) rc = analyze(c);
    return finish(c, rc, out);
}

void rpx_cost_free(rpx_cost *c)
{
    size_t i;
    if (!c) return;
    for (i = 0; i < c->n_graphs; i++) rpx__map_free(&c->graphs[i].names);
    free(c->graphs);
    free(c->nodes);
    free(c->vals);
    free(c->pub);
    free(c->optot);
    free(c->groups);
    free(c->warnings);
    rpx__unload(c);
    rpx__arena_free(&c->arena);
    free(c);
}

const rpx_efficiency *rpx_cost_efficiency(const rpx_cost *c) { return c ? &c->eff : NULL; }
size_t rpx_cost_node_count(const rpx_cost *c) { return c ? c->n_pub : 0; }

const rpx_cost_node *rpx_cost_node_at(const rpx_cost *c, size_t i)
{
    return c && i < c->n_pub ? &c->pub[i] : NULL;
}

size_t rpx_cost_warning_count(const rpx_cost *c) { return c ? c->n_warnings : 0; }

const char *rpx_cost_warning_at(const rpx_cost *c, size_t i)
{
    return c && i < c->n_warnings ? c->warnings[i].text : NULL;
}

/* ---- JSON ------------------------------------------------------------------ */
static json_t *count(double v)
{
    if (!isfinite(v)) return json_null();
    if (v == floor(v) && fabs(v) < 9007199254740992.0) return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *tensor_json(const rpx_cost *c, const rpx__val *v)
{
    json_t *o = json_object(), *shape;
    int k;
    json_object_set_new(o, "name", json_string(v->name));
    json_object_set_new(o, "dtype", v->dtype ? json_string(rpx__dtype_name(v->dtype)) : json_null());
    if (v->rank < 0 || !v->is_tensor) {
        shape = json_null();
    } else {
        shape = json_array();
        for (k = 0; k < v->rank; k++)
            json_array_append_new(shape, v->dims[k] >= 0 ? json_integer(v->dims[k]) : json_null());
    }
    json_object_set_new(o, "shape", shape);
    json_object_set_new(o, "bytes", count(rpx__bytes(c, v)));
    return o;
}

static json_t *model_json(const rpx_cost *c)
{
    const rpx__graph *g = &c->graphs[0];
    json_t *m = json_object(), *in = json_array(), *out = json_array();
    size_t i;
    char producer[256];
    snprintf(producer, sizeof producer, "%s%s%s", c->m->producer_name ? c->m->producer_name : "",
             c->m->producer_version && *c->m->producer_version ? " " : "",
             c->m->producer_version ? c->m->producer_version : "");
    json_object_set_new(m, "path", json_string(c->path));
    json_object_set_new(m, "ir_version", c->m->has_ir_version ? json_integer(c->m->ir_version) : json_null());
    json_object_set_new(m, "opset", json_integer(c->opset));
    json_object_set_new(m, "producer", *producer ? json_string(producer) : json_null());
    for (i = 0; i < g->n_inputs; i++) json_array_append_new(in, tensor_json(c, &c->vals[g->inputs[i]]));
    for (i = 0; i < g->n_outputs; i++) json_array_append_new(out, tensor_json(c, &c->vals[g->outputs[i]]));
    json_object_set_new(m, "inputs", in);
    json_object_set_new(m, "outputs", out);
    json_object_set_new(m, "nodes", json_integer((json_int_t)c->n_total));
    json_object_set_new(m, "nodes_costed", json_integer((json_int_t)c->n_costed));
    json_object_set_new(m, "weight_tensors_left_in_file", json_integer((json_int_t)c->elided_tensors));
    return m;
}

static json_t *params_json(const rpx_cost *c)
{
    json_t *p = json_object(), *by = json_object(), *ints = json_object();
    int t;
    json_object_set_new(p, "count", count(c->eff.params));
    json_object_set_new(p, "bytes", count(c->eff.param_bytes));
    json_object_set_new(p, "storage_bytes", count(c->param_storage_bytes));
    for (t = 1; t < RPX__T_COUNT; t++) {
        json_t *d;
        if (c->by_dtype_elems[t] == 0) continue;
        d = json_object();
        json_object_set_new(d, "count", count(c->by_dtype_elems[t]));
        json_object_set_new(d, "storage_bytes", count(c->by_dtype_bytes[t]));
        json_object_set_new(by, rpx__dtype_name(t), d);
    }
    json_object_set_new(p, "by_dtype", by);
    json_object_set_new(ints, "count", count(c->params_int));
    json_object_set_new(ints, "storage_bytes", count(c->params_int_bytes));
    json_object_set_new(p, "integer_constants", ints);
    return p;
}

json_t *rpx_cost_json(const rpx_cost *c, int per_op)
{
    json_t *o, *by, *un, *w;
    size_t i, k;
    if (!c) return NULL;
    o = rpx_efficiency_json(&c->eff);
    if (!o) return NULL;
    json_object_set_new(o, "schema", json_string(RPX_COST_SCHEMA));
    json_object_set_new(o, "precision", c->precision ? json_string(c->precision) : json_null());
    json_object_set_new(o, "model", model_json(c));
    json_object_set_new(o, "params_detail", params_json(c));
    by = json_array();
    for (i = 0; i < c->n_optot; i++) {
        const rpx__optotal *t = &c->optot[i];
        json_t *r = json_object();
        int none = t->unsupported == t->count;
        json_object_set_new(r, "op_type", json_string(t->op));
        json_object_set_new(r, "count", json_integer((json_int_t)t->count));
        json_object_set_new(r, "unsupported", json_integer((json_int_t)t->unsupported));
        json_object_set_new(r, "macs", none ? json_null() : count(t->macs));
        json_object_set_new(r, "flops", none ? json_null() : count(t->flops));
        json_object_set_new(r, "params", count(t->params));
        json_object_set_new(r, "bytes", none ? json_null() : count(t->bytes));
        json_array_append_new(by, r);
    }
    json_object_set_new(o, "by_op", by);
    un = json_array();
    for (i = 0; i < c->n_groups; i++) {
        json_t *r = json_object();
        json_object_set_new(r, "op_type", json_string(c->groups[i].op));
        json_object_set_new(r, "count", json_integer((json_int_t)c->groups[i].count));
        json_object_set_new(r, "reason", json_string(c->groups[i].reason));
        json_array_append_new(un, r);
    }
    json_object_set_new(o, "unsupported", un);
    w = json_array();
    for (i = 0; i < c->n_warnings; i++) json_array_append_new(w, json_string(c->warnings[i].text));
    json_object_set_new(o, "warnings", w);
    if (per_op) {
        json_t *nodes = json_array();
        for (i = 0; i < c->n_pub; i++) {
            const rpx_cost_node *p = &c->pub[i];
            const rpx__node *n = &c->nodes[c->graphs[0].nodes[i]];
            json_t *r = json_object(), *outs = json_array();
            json_object_set_new(r, "name", json_string(p->name));
            json_object_set_new(r, "op_type", json_string(p->op_type));
            if (*p->domain) json_object_set_new(r, "domain", json_string(p->domain));
            json_object_set_new(r, "supported", json_boolean(p->supported));
            json_object_set_new(r, "dense", json_boolean(p->dense));
            json_object_set_new(r, "macs", count(p->macs));
            json_object_set_new(r, "flops", count(p->flops));
            json_object_set_new(r, "params", count(p->params));
            json_object_set_new(r, "bytes_read", count(p->bytes_read));
            json_object_set_new(r, "bytes_written", count(p->bytes_written));
            if (n->trips != 1) json_object_set_new(r, "iterations", count(n->trips));
            json_object_set_new(r, "reason", p->reason ? json_string(p->reason) : json_null());
            if (n->note && p->supported) json_object_set_new(r, "note", json_string(n->note));
            for (k = 0; k < n->n_out; k++)
                if (n->out[k] >= 0) json_array_append_new(outs, tensor_json(c, &c->vals[n->out[k]]));
            json_object_set_new(r, "outputs", outs);
            json_array_append_new(nodes, r);
        }
        json_object_set_new(o, "nodes", nodes);
    }
    return o;
}
