/* core_module.c — rpxprof._core, the extension module under the Python
 * package `rpxprof`: it runs a Python callable through rpx_runner_run as a
 * caller-made target (kind "python"; the timing loop is librpxprof's, in C),
 * and wraps the library's cost, roofline, system card and GPU table. The
 * package's Python layer (python/rpxprof/__init__.py) checks the arguments
 * and turns the JSON text returned here into Python objects.
 *
 * It takes CPython's symbols from the interpreter that imports it and never
 * links libpython. The GIL is held for the whole run: the timed calls are
 * Python calls, and no other Python thread runs meanwhile. */
#include "python/py_call.h"
#include "python/py_interrupt.h"
#include "python/py_module_file.h"
#include "python/core_history.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/compare.h"
#include "rpxprof/cost.h"
#include "rpxprof/error.h"
#include "rpxprof/html.h"
#include "common/json.h"
#include "device/nvml.h"
#include "common/output.h"
#include "report/trace.h"
#include "rpxprof/options.h"
#include "rpxprof/plot.h"
#include "rpxprof/roofline.h"
#include "rpxprof/runner.h" /* RPX_EXIT_*: the exit codes a refusal carries (.code) */
#include "rpxprof/summary.h"
#include "rpxprof/system.h"
#include "rpxprof/target.h"
#include "sweep/sweep.h"

static PyObject *g_error_class; /* rpxprof.RpxprofError, set by the package */

/* Raise RpxprofError(message, code); returns NULL. */
static PyObject *raise_error(const char *message, int code)
{
    PyObject *e;
    if (!g_error_class) {
        PyErr_SetString(PyExc_RuntimeError, message);
        return NULL;
    }
    e = PyObject_CallFunction(g_error_class, "si", message, code);
    if (e) {
        PyErr_SetObject(g_error_class, e);
        Py_DECREF(e);
    }
    return NULL;
}

static PyObject *set_error_class(PyObject *self, PyObject *cls)
{
    (void)self;
    if (!PyType_Check(cls) || !PyObject_IsSubclass(cls, PyExc_Exception)) {
        PyErr_SetString(PyExc_TypeError, "an exception class is needed");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XSETREF(g_error_class, cls);
    Py_RETURN_NONE;
}

/* The JSON text of a jansson value as a Python str (consumes `v`). */
static PyObject *json_text(json_t *v)
{
    char *s;
    PyObject *out;
    if (!v) return PyErr_NoMemory();
    s = rpx_json_dumps(v);
    json_decref(v);
    if (!s) return PyErr_NoMemory();
    out = PyUnicode_FromString(s);
    free(s);
    return out;
}

/* A list of str as a malloc'ed vector of borrowed UTF-8 pointers. */
static int str_list(PyObject *list, const char *what, const char ***out, size_t *n)
{
    Py_ssize_t i, len;
    *out = NULL;
    *n = 0;
    if (list == Py_None) return 0;
    if (!PyList_Check(list)) {
        PyErr_Format(PyExc_TypeError, "%s: a list of str is needed", what);
        return -1;
    }
    len = PyList_GET_SIZE(list);
    *out = calloc((size_t)len + 1, sizeof **out);
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < len; i++) {
        const char *s = PyUnicode_Check(PyList_GET_ITEM(list, i))
                            ? PyUnicode_AsUTF8(PyList_GET_ITEM(list, i))
                            : NULL;
        if (!s) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s: item %zd is not a str", what, i);
            free(*out);
            *out = NULL;
            return -1;
        }
        (*out)[i] = s;
    }
    *n = (size_t)len;
    return 0;
}

/* ---- the callable as a caller-made target ------------------------------- */

typedef struct core_state {
    rpx__pycall call;             /* first: the py_call hooks take this state */
    const char *module, *qualname;
    PyObject *args, *kwargs;      /* profile(fn, *args, kwargs=): the caller's objects, or
                                     NULL (the arrays of the inputs, by name) */
    char *file;                   /* compare_run("base/m.py:fn", ...): the module's file,
                                     imported in the worker's setup (owned), or NULL */
    char dotted[256];             /* that file's module name, once imported */
} core_state;

/* A module given by its file: imported here, in the worker, outside timing; the
 * function to time is its `qualname` (py_module_file.h: this file, no other copy). */
static int import_file(core_state *s, rpx_error *err)
{
    PyObject *m = rpx__py_import_file(s->file, s->dotted, sizeof s->dotted, err), *f;
    if (!m) return err && err->code ? err->code : RPX_ENOTFOUND;
    s->module = s->dotted;
    f = PyObject_GetAttrString(m, s->qualname);
    Py_DECREF(m);
    if (!f) {
        PyErr_Clear();
        return rpx__pycall_fail(err, RPX_ENOTFOUND, "%s: the module %s has no function '%s'",
                                s->file, s->dotted, s->qualname);
    }
    if (!PyCallable_Check(f)) {
        rpx__pycall_fail(err, RPX_EINVAL, "%s: '%s.%s' is not callable (an object of type %s); "
                         "name a function", s->file, s->dotted, s->qualname, Py_TYPE(f)->tp_name);
        Py_DECREF(f);
        return RPX_EINVAL;
    }
    Py_XSETREF(s->call.func, f);
    return 0;
}

static int core_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                      rpx_error *err)
{
    core_state *s = *state;
    int rc;
    s->call.cuda = info && info->device && strcmp(info->device, "cuda") == 0;
    if (s->file && (rc = import_file(s, err)) != 0) return rc;
    rc = s->args ? rpx__pycall_bind_native(&s->call, s->args, s->kwargs, err)
                 : rpx__pycall_bind(&s->call, in, err);
    if (rc != 0) return rc;
    return rpx__pycall_check_signature(&s->call, err);
}

static void core_teardown(void *state)
{
    core_state *s = state;
    Py_CLEAR(s->call.result);
}

static json_t *core_section(void *state)
{
    core_state *s = state;
    json_t *o = json_object();
    PyObject *sys = PyImport_ImportModule("sys"), *exe = NULL, *mod = NULL, *file = NULL;
    if (!o) return NULL;
    rpx__pycall_version(o);
    if (sys) exe = PyObject_GetAttrString(sys, "executable");
    PyErr_Clear();
    json_object_set_new(o, "executable", rpx__pycall_json_utf8(exe));
    json_object_set_new(o, "module", s->module ? json_string(s->module) : json_null());
    if (s->module) {
        PyObject *mods = PyImport_GetModuleDict();
        mod = mods ? PyDict_GetItemString(mods, s->module) : NULL;
        if (mod) file = PyObject_GetAttrString(mod, "__file__");
        PyErr_Clear();
    }
    json_object_set_new(o, "module_file", rpx__pycall_json_utf8(file));
    json_object_set_new(o, "function", s->qualname ? json_string(s->qualname) : json_null());
    rpx__pycall_section(&s->call, o);
    json_object_set_new(o, "virtualenv", json_null());
    json_object_set_new(o, "api", json_string("rpxprof.profile (the calling interpreter)"));
    Py_XDECREF(file);
    Py_XDECREF(exe);
    Py_XDECREF(sys);
    return o;
}

/* The interpreter's state around each worker's fork() (the GIL is held). */
static void core_before_fork(void *arg)
{
    (void)arg;
    PyOS_BeforeFork();
}

static void core_after_fork_parent(void *arg)
{
    (void)arg;
    PyOS_AfterFork_Parent();
}

static void core_after_fork_child(void *arg)
{
    (void)arg;
    PyOS_AfterFork_Child();
}

/* A caller-made Python target: py_call's hooks, this module's setup,
 * teardown and section, and the interpreter kept consistent over forks. */
static void python_hooks(rpx_target_hooks *h, core_state *st)
{
    memset(h, 0, sizeof *h);
    h->kind_name = "python";
    rpx__pycall_hooks(h, st);
    h->setup = core_setup;
    h->teardown = core_teardown;
    h->section = core_section;
    h->before_fork = core_before_fork;
    h->after_fork_parent = core_after_fork_parent;
    h->after_fork_child = core_after_fork_child;
}

/* the report's status word: the one status map (include/rpxprof/runner.h) */
static const char *status_text(rpx_runner_status st) { return rpx_runner_status_word(st); }

static void custom_target(rpx_target_hooks *custom, core_state *st, PyObject *fn, const char *module,
                          const char *qualname)
{
    memset(st, 0, sizeof *st);
    memset(custom, 0, sizeof *custom);
    Py_INCREF(fn);
    st->call.func = fn;
    st->call.function_name = qualname;
    st->module = module;
    st->qualname = qualname;
    python_hooks(custom, st);
}

/* One run option from Python, by its key, through the options' table (its
 * range and words, as `rpxprof run` and manifests): None leaves it unset; a
 * bool for a flag; a number for a number; a str for text (or any option, as
 * the command line would read it). 0, or -1 with the exception set. */
static int py_option(rpx_runner_config *c, const rpx_run_option *o, PyObject *v)
{
    rpx_error err = {0};
    const char *text;
    int rc;
    if (v == Py_None) return 0;
    if (o->kind == RPX_OPT_FLAG) {
        int t = PyObject_IsTrue(v);
        if (t < 0) return -1;
        rc = rpx_run_option_set_number(c, o, t, o->key, &err);
    } else if (PyUnicode_Check(v)) {
        if (!(text = PyUnicode_AsUTF8(v))) return -1;
        rc = rpx_run_option_set_text(c, o, text, o->key, &err);
    } else if (o->kind != RPX_OPT_STRING && o->kind != RPX_OPT_ENUM && !PyBool_Check(v) &&
               (PyLong_Check(v) || PyFloat_Check(v))) {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        if (o->kind == RPX_OPT_INT && !PyLong_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: an int, not float", o->key);
            return -1;
        }
        rc = rpx_run_option_set_number(c, o, d, o->key, &err);
    } else {
        PyErr_Format(PyExc_TypeError, "%s: %s, not %s", o->key,
                     o->kind == RPX_OPT_STRING || o->kind == RPX_OPT_ENUM ? "a str"
                                                                         : "a number",
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    if (rc != 0) {
        raise_error(err.message, RPX_EXIT_USAGE);
        return -1;
    }
    return 0;
}

/* profile()'s own keywords: what is not a run option of the table */
typedef struct profile_args {
    PyObject *samples, *args, *kwargs, *stop_after, *processes;
    const char *module, *qualname, *inputs, *label, *meta;
    int progress;
} profile_args;

/* Every keyword of profile(): its own (profile_args), then the run options of
 * the table that Python takes (RPX_OPT_IN_PY), by their keys. 0 or -1. */
static int profile_keywords(PyObject *kw, profile_args *p, rpx_runner_config *c)
{
    static const char *const own[] = {"module", "qualname", "inputs", "label", "meta", NULL};
    const char **own_field[] = {&p->module, &p->qualname, &p->inputs, &p->label, &p->meta};
    PyObject *key, *v;
    Py_ssize_t pos = 0;
    while (kw && PyDict_Next(kw, &pos, &key, &v)) {
        const char *k = PyUnicode_AsUTF8(key);
        const rpx_run_option *o;
        size_t i;
        if (!k) return -1;
        for (i = 0; own[i] && strcmp(own[i], k) != 0; i++) continue;
        if (own[i]) {
            if (v != Py_None && !(*own_field[i] = PyUnicode_AsUTF8(v))) return -1;
        } else if (strcmp(k, "samples") == 0) p->samples = v;
        else if (strcmp(k, "args") == 0) p->args = v;
        else if (strcmp(k, "kwargs") == 0) p->kwargs = v;
        else if (strcmp(k, "stop_after") == 0) p->stop_after = v;
        else if (strcmp(k, "progress") == 0) {
            if ((p->progress = PyObject_IsTrue(v)) < 0) return -1;
        } else if (strcmp(k, "processes") == 0 && PyLong_Check(v) && PyLong_AsLong(v) == 0) {
            p->processes = v; /* 0: one worker in this process */
        } else if ((o = rpx_run_option_find(k)) && strcmp(o->key, k) == 0 &&
                   rpx_run_option_accepted(o, RPX_SPELL_PY)) {
            if (py_option(c, o, v) != 0) return -1;
        } else {
            PyErr_Format(PyExc_TypeError, "profile(): unknown keyword '%s'", k);
            return -1;
        }
    }
    return 0;
}

/* profile(fn, model, **keywords): module, qualname, inputs, samples, label, meta
 * (JSON text), args, kwargs, progress, stop_after, and the run's options that
 * the table gives to Python (rpxprof/options.h: warmup, repeats, device, ...,
 * by their keys; processes 0: one worker in this process, no fork). The
 * output checks: as `rpxprof run --check-outputs ...` (docs/output-checks.md).
 * args (a tuple) / kwargs (a dict or None): fn(*args, **kwargs) with the caller's
 * own objects, and no inputs file (model may be any name); progress: the
 * loop's progress line on stderr (the caller checked the terminal).
 * -> (report_json, status, exit_code, warnings, error) */
static PyObject *core_profile(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *fn, *out = NULL, *warnings = NULL, *report = NULL;
    const char *model;
    const char **sample_files = NULL;
    size_t n_samples = 0;
    int rc;
    profile_args p;
    rpx_runner_config c;
    rpx_runner_result res;
    rpx_target_hooks custom;
    rpx_py_run pr;
    int forked;
    core_state st;
    rpx_error err = {0};
    json_t *meta_json = NULL;
    (void)self;
    rpx_runner_config_init(&c);   /* the options' defaults, from their table */
    memset(&p, 0, sizeof p);
    p.samples = p.args = p.kwargs = Py_None;
    if (!PyArg_ParseTuple(args, "Os", &fn, &model) || profile_keywords(kw, &p, &c) != 0)
        return NULL;
    if ((p.args != Py_None && !PyTuple_Check(p.args)) ||
        (p.kwargs != Py_None && !PyDict_Check(p.kwargs))) {
        PyErr_SetString(PyExc_TypeError, "args: a tuple, kwargs: a dict");
        return NULL;
    }
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "fn must be callable");
        return NULL;
    }
    if (p.stop_after && p.stop_after != Py_None &&
        (c.stop_after_s = PyFloat_AsDouble(p.stop_after)) == -1.0 && PyErr_Occurred())
        return NULL;
    if (!rpx_run_option_given(&c, rpx_run_option_find("processes"))) {
        c.isolate = 0;            /* processes 0 or none: one worker in this process */
        c.processes = 1;
    }
    c.spelling = RPX_SPELL_PY; /* the runner's own messages name keywords */
    c.model = model;
    c.inputs_label = p.label;
    c.output = NULL;
    c.progress = p.progress;
    custom_target(&custom, &st, fn, p.module, p.qualname);
    custom.outputs = rpx__pycall_outputs;
    c.target.custom = &custom;
    /* ranges and every rule combining options, worded for Python (max_time=); the
     * runner checks them again as manifests' keys */
    if (rpx_runner_config_check(&c, RPX_SPELL_PY, &err) != 0) {
        rpx__pycall_clear(&st.call);
        return raise_error(err.message, RPX_EXIT_USAGE);
    }
    if (str_list(p.samples, "samples", &sample_files, &n_samples) != 0) {
        rpx__pycall_clear(&st.call);
        return NULL;
    }
    if (p.meta) {
        json_error_t je;
        meta_json = json_loads(p.meta, 0, &je);
        if (!meta_json) {
            free(sample_files);
            rpx__pycall_clear(&st.call);
            return raise_error("meta: not JSON", RPX_EXIT_USAGE);
        }
    }
    memset(&res, 0, sizeof res);
    st.args = p.args != Py_None ? p.args : NULL;
    st.kwargs = p.kwargs != Py_None ? p.kwargs : NULL;
    if (p.kwargs != Py_None && !st.args) st.args = PyTuple_New(0); /* kwargs only */
    else Py_XINCREF(st.args);
    c.inputs = p.inputs;
    forked = c.isolate;
    if (forked) { /* workers: the GIL released while they run (py_interrupt.c) */
        custom.before_fork = rpx__py_run_before_fork;
        custom.after_fork_parent = rpx__py_run_after_fork_parent;
        custom.after_fork_child = rpx__py_run_after_fork_child;
        custom.fork_arg = &pr;
    }
    c.sample_files = sample_files;
    c.n_sample_files = n_samples;
    c.meta = meta_json;

    if (forked && rpx__py_run_begin(&pr) != 0) goto done;
    rc = rpx_runner_run(&c, &res, &err);
    /* in a forked worker the runner ends the process itself: only the
     * process that called profile() comes back here */
    if (forked &&
        rpx__py_run_end(&pr, rc == 0 && res.status == RPX_RUNNER_INTERRUPTED) != 0)
        goto done;
    if (rc != 0) {
        raise_error(err.message[0] ? err.message : rpx_strerror(rc),
                    rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE);
        goto done;
    }
    report = json_text(json_incref(res.report));
    warnings = PyList_New(0);
    if (report && warnings) {
        size_t i;
        json_t *w;
        json_array_foreach(res.warnings, i, w) {
            PyObject *s = PyUnicode_FromString(json_string_value(w) ? json_string_value(w) : "");
            if (!s || PyList_Append(warnings, s) != 0) {
                Py_XDECREF(s);
                goto done;
            }
            Py_DECREF(s);
        }
        out = Py_BuildValue("(OsiOs)", report, status_text(res.status), rpx_runner_exit_code(&res),
                            warnings, res.error);
    }
done:
    Py_XDECREF(report);
    Py_XDECREF(warnings);
    rpx_runner_result_free(&res);
    rpx__pycall_clear(&st.call);
    Py_XDECREF(st.args);
    json_decref(meta_json);
    free(sample_files);
    return out;
}

/* ---- the model cost, bounds, system card, GPU table ------------------------ */

static PyObject *core_cost(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"model", "bind_inputs", "bind_dims", "precision", "per_op", NULL};
    PyObject *model, *bi = Py_None, *bd = Py_None, *out;
    const char *precision = NULL, **inputs = NULL, **dims = NULL;
    size_t n_inputs = 0, n_dims = 0;
    int per_op = 0, rc;
    rpx_cost_options opt;
    rpx_cost *cost = NULL;
    rpx_error err = {0};
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOzp", names, &model, &bi, &bd, &precision,
                                     &per_op))
        return NULL;
    if (str_list(bi, "bind_inputs", &inputs, &n_inputs) != 0) return NULL;
    if (str_list(bd, "bind_dims", &dims, &n_dims) != 0) {
        free(inputs);
        return NULL;
    }
    rpx_cost_options_init(&opt);
    opt.precision = precision;
    opt.input_shapes = inputs;
    opt.n_input_shapes = n_inputs;
    opt.dims = dims;
    opt.n_dims = n_dims;
    if (PyBytes_Check(model)) {
        rc = rpx_cost_analyze_onnx_buffer(PyBytes_AS_STRING(model), (size_t)PyBytes_GET_SIZE(model),
                                          "<bytes>", &opt, &cost, &err);
    } else if (PyUnicode_Check(model)) {
        const char *path = PyUnicode_AsUTF8(model);
        if (!path) {
            free(inputs);
            free(dims);
            return NULL;
        }
        rc = rpx_cost_analyze_onnx(path, &opt, &cost, &err);
    } else {
        free(inputs);
        free(dims);
        PyErr_SetString(PyExc_TypeError, "model: an ONNX file's path or its bytes");
        return NULL;
    }
    free(inputs);
    free(dims);
    if (rc) return raise_error(err.message, rc == RPX_EINVAL ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE);
    out = json_text(rpx_cost_json(cost, per_op));
    rpx_cost_free(cost);
    return out;
}

static int load_table(rpx_gpu_table **t)
{
    rpx_error err = {0};
    if (rpx_gpu_table_create(t) != 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (rpx_gpu_table_load_env(*t, &err) != 0) {
        raise_error(err.message, RPX_EXIT_FAILURE);
        rpx_gpu_table_free(*t);
        *t = NULL;
        return -1;
    }
    return 0;
}

/* roofline(flops, bytes, gpus: list of keys or None (all), precision) */
static PyObject *core_roofline(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"flops", "bytes", "gpus", "precision", "tf32", NULL};
    double flops, bytes;
    PyObject *gl = Py_None, *out = NULL;
    const char *precision = "fp32", **keys = NULL;
    size_t n_keys = 0, i;
    int tf32 = 0;
    rpx_gpu_table *t = NULL;
    rpx_roofline_input in;
    rpx_error err = {0};
    rpx_cpu_peak est;
    rpx_gpu_spec cpu_spec;
    rpx_cpu_target_storage cpu_store;
    int have_cpu = 0;
    json_t *root = NULL, *bounds = NULL, *input = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "dd|Osp", names, &flops, &bytes, &gl, &precision,
                                     &tf32))
        return NULL;
    if (str_list(gl, "gpus", &keys, &n_keys) != 0) return NULL;
    if (load_table(&t) != 0) goto out;
    rpx_roofline_input_init(&in);
    in.flops = flops;
    in.bytes = bytes;
    in.tf32 = tf32;
    {
        rpx_precision p;
        if (rpx_precision_parse(precision, &p, &err) != 0) {
            char msg[sizeof err.message + 16];
            snprintf(msg, sizeof msg, "precision: %s", err.message);
            raise_error(msg, RPX_EXIT_USAGE);
            goto out;
        }
        in.precision = p;
    }
    root = json_object();
    bounds = json_object();
    input = json_object();
    if (!root || !bounds || !input) {
        PyErr_NoMemory();
        goto out;
    }
    for (i = 0; i < (keys ? n_keys : rpx_gpu_table_count(t)); i++) {
        const rpx_gpu_spec *g;
        json_t *b;
        if (!keys) {
            g = rpx_gpu_table_at(t, i);
        } else if (strcmp(keys[i], "host-cpu") == 0) {
            if (!have_cpu) {
                if (rpx_cpu_peak_estimate(&est, &err) != 0) {
                    raise_error(err.message, RPX_EXIT_FAILURE);
                    goto out;
                }
                rpx_cpu_target_spec(&est, NULL, &cpu_spec, &cpu_store);
                have_cpu = 1;
            }
            g = &cpu_spec;
        } else if (!(g = rpx_gpu_table_find(t, keys[i]))) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "gpus: no target with key '%s'; rpxprof.gpus() lists them (host-cpu is "
                     "this CPU)",
                     keys[i]);
            raise_error(msg, RPX_EXIT_USAGE);
            goto out;
        }
        b = rpx_roofline_json(g, &in);
        if (!b || json_object_set_new(bounds, g->key, b) != 0) {
            PyErr_NoMemory();
            goto out;
        }
    }
    json_object_set_new(input, "source", json_string("python"));
    json_object_set_new(input, "file", json_null());
    json_object_set_new(input, "flops", rpx_json_real_or_null(in.flops));
    json_object_set_new(input, "bytes", rpx_json_real_or_null(in.bytes));
    json_object_set_new(input, "nodes", json_integer(0));
    json_object_set_new(input, "precision", json_string(rpx_precision_name(in.precision)));
    json_object_set_new(input, "tf32", json_boolean(in.tf32));
    json_object_set_new(input, "measured_p50_ms", json_null());
    json_object_set_new(root, "schema", json_string("rpxprof.roofline/1"));
    json_object_set_new(root, "input", input);
    input = NULL;
    json_object_set_new(root, "bounds", bounds);
    bounds = NULL;
    out = json_text(root);
    root = NULL;
out:
    json_decref(root);
    json_decref(bounds);
    json_decref(input);
    rpx_gpu_table_free(t);
    free(keys);
    return out;
}

static PyObject *core_system_card(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", NULL};
    const char *device = "cpu";
    rpx_card_options opt;
    rpx_nvml *nvml = NULL;
    rpx_error err = {0};
    json_t *card, *now;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|s", names, &device)) return NULL;
    if (strcmp(device, "cpu") != 0 && strcmp(device, "cuda") != 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "device '%.100s': expected cpu or cuda", device);
        return raise_error(msg, RPX_EXIT_USAGE);
    }
    memset(&opt, 0, sizeof opt);
    opt.device = device;
    if (rpx_nvml_open(&nvml, &err) != 0) nvml = NULL; /* the card records why */
    opt.nvml = nvml;
    card = rpx_system_card(&opt, &err);
    now = card ? rpx_system_conditions(nvml) : NULL;
    if (card && now) rpx_system_card_set_conditions(card, now, NULL);
    json_decref(now);
    if (nvml) rpx_nvml_close(nvml);
    if (!card) return raise_error(err.message[0] ? err.message : "cannot build the system card",
                                  RPX_EXIT_FAILURE);
    return json_text(card);
}

static PyObject *core_gpus(PyObject *self, PyObject *noargs)
{
    rpx_gpu_table *t = NULL;
    json_t *arr;
    size_t i;
    (void)self;
    (void)noargs;
    if (load_table(&t) != 0) return NULL;
    arr = json_array();
    for (i = 0; arr && i < rpx_gpu_table_count(t); i++)
        if (json_array_append_new(arr, rpx_gpu_spec_json(rpx_gpu_table_at(t, i))) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    rpx_gpu_table_free(t);
    return json_text(arr);
}

/* builtin_gpus(): the built-in table only (no RPX_GPU_SPECS file can change it):
 * rpxprof.reference builds REFERENCE_GPUS from its ref-* entries (issue 26). */
static PyObject *core_builtin_gpus(PyObject *self, PyObject *noargs)
{
    json_t *arr = json_array();
    size_t i;
    (void)self;
    (void)noargs;
    for (i = 0; arr && i < rpx_gpu_builtin_count(); i++)
        if (json_array_append_new(arr, rpx_gpu_spec_json(rpx_gpu_builtin_at(i))) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    return json_text(arr);
}

/* write_report(path, text, force): through the library's output guard. */
static PyObject *core_write_report(PyObject *self, PyObject *args)
{
    const char *path, *text;
    Py_ssize_t len;
    int force = 0;
    rpx_output *o = NULL;
    rpx_output_options opt = {RPX_OUTPUT_REPORT, "rpxprof.profile/1", 0, NULL, 0, "report", 0,
                              "force=True"};
    rpx_error err = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "ss#|p", &path, &text, &len, &force)) return NULL;
    opt.force = force;
    if (rpx_output_open(path, &opt, &o, &err) != 0 ||
        rpx_output_commit(o, text, (size_t)len, &err) != 0)
        return raise_error(err.message, RPX_EXIT_FAILURE);
    Py_RETURN_NONE;
}

/* write_trace(path, report_text, force, max_events): the Chrome trace of a
 * report that kept its timeline, as `rpxprof run --trace` writes it (the same
 * writer, src/report/trace.c, and guard: an existing file is replaced only
 * when it is an rpxprof trace; profile() has no force). report_text None: only the
 * place is checked (before anything runs), nothing is written. */
static PyObject *core_write_trace(PyObject *self, PyObject *args)
{
    const char *path, *text = NULL;
    Py_ssize_t len = 0;
    int force = 0;
    long max_events = RPX_TRACE_DEFAULT_MAX_EVENTS;
    rpx_output *o = NULL;
    rpx_output_options opt = {RPX_OUTPUT_REPORT, RPX_TRACE_SCHEMA, 0, NULL, 0, "trace", 1, NULL};
    rpx_error err = {0};
    json_t *report;
    json_error_t je;
    char *trace;
    size_t tlen = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "sz#|pl", &path, &text, &len, &force, &max_events)) return NULL;
    opt.force = force;
    if (max_events < RPX_TRACE_MIN_MAX_EVENTS) max_events = RPX_TRACE_MIN_MAX_EVENTS;
    if (rpx_output_open(path, &opt, &o, &err) != 0) return raise_error(err.message, RPX_EXIT_USAGE);
    if (!text) {
        rpx_output_discard(o);
        Py_RETURN_NONE;
    }
    if (!(report = json_loadb(text, (size_t)len, 0, &je))) {
        rpx_output_discard(o);
        return raise_error("trace: the report is not valid JSON", RPX_EXIT_FAILURE);
    }
    trace = rpx__trace_from_report(report, "the report", "max_events=", max_events, &tlen, &err);
    json_decref(report);
    if (!trace) {
        rpx_output_discard(o);
        return raise_error(err.message, RPX_EXIT_FAILURE);
    }
    if (rpx_output_commit(o, trace, tlen, &err) != 0) {
        free(trace);
        return raise_error(err.message, RPX_EXIT_FAILURE);
    }
    free(trace);
    Py_RETURN_NONE;
}

/* {cli: --max-time, manifest: max_time, ...}: how each front end that
 * takes the option spells it (rpx_run_option_spelled), or NULL */
static PyObject *front_ends(const rpx_run_option *o)
{
    static const char *const names[RPX_SPELL_COUNT] = {"cli", "manifest", "python", "compare"};
    PyObject *d = PyDict_New();
    int sp;
    for (sp = 0; d && sp < RPX_SPELL_COUNT; sp++) {
        char buf[80];
        PyObject *v;
        if (!rpx_run_option_accepted(o, (rpx_option_spelling)sp)) continue;
        v = PyUnicode_FromString(rpx_run_option_spelled(o, (rpx_option_spelling)sp, buf,
                                                        sizeof buf));
        if (!v || PyDict_SetItemString(d, names[sp], v) != 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* run_options() -> [{name, key, kind, default, choices, range, help, front_ends,
 * manifest_level}]: the table of a run's options (rpxprof/options.h), the one
 * description the command line, manifests, compare --run and these keywords
 * share. default: what a run gets when the option is not given (None: nothing,
 * or the kind's rule); front_ends: {front end: its spelling} for those that
 * take it (cli, manifest, python, compare); manifest_level: where a manifest
 * takes it. */
static PyObject *core_run_options(PyObject *self, PyObject *unused)
{
    static const char *const kinds[] = {"int", "number", "duration", "share", "enum", "flag",
                                        "text"};
    size_t n, i, k;
    const rpx_run_option *t = rpx_run_options(&n);
    PyObject *list = PyList_New(0);
    (void)self;
    (void)unused;
    for (i = 0; list && i < n; i++) {
        char range[400];
        PyObject *d, *dflt, *choices = Py_None, *fe;
        rpx_run_option_range_text(&t[i], range, sizeof range);
        if (t[i].kind == RPX_OPT_FLAG)
            dflt = PyBool_FromLong(0);
        else if (t[i].kind == RPX_OPT_STRING || (t[i].flags & RPX_OPT_ENUM_TEXT))
            dflt = (t[i].flags & RPX_OPT_TEXT_DEFAULT) ? PyUnicode_FromString(t[i].default_text)
                                                       : (Py_INCREF(Py_None), Py_None);
        else if (t[i].kind == RPX_OPT_ENUM)
            dflt = PyUnicode_FromString(t[i].choices[(int)t[i].dflt]);
        else if (t[i].dflt != t[i].dflt || t[i].dflt == 0)
            dflt = (Py_INCREF(Py_None), Py_None); /* not given: none, or the kind's rule */
        else if (t[i].kind == RPX_OPT_INT)
            dflt = PyLong_FromLong((long)t[i].dflt);
        else
            dflt = PyFloat_FromDouble(t[i].dflt);
        if (t[i].choices) {
            choices = PyList_New(0);
            for (k = 0; choices && t[i].choices[k]; k++) {
                PyObject *c = PyUnicode_FromString(t[i].choices[k]);
                if (!c || PyList_Append(choices, c) != 0) Py_CLEAR(choices);
                Py_XDECREF(c);
            }
        } else {
            Py_INCREF(choices);
        }
        fe = front_ends(&t[i]);
        d = dflt && choices && fe
                ? Py_BuildValue("{s:s,s:s,s:s,s:O,s:O,s:s,s:s,s:O,s:s}", "name", t[i].name, "key",
                                t[i].key, "kind", kinds[t[i].kind], "default", dflt, "choices",
                                choices, "range", range, "help", t[i].help, "front_ends", fe,
                                "manifest_level",
                                (t[i].flags & RPX_OPT_MANIFEST_MODEL)      ? "model"
                                : (t[i].flags & RPX_OPT_MANIFEST_DEFAULTS) ? "defaults"
                                : (t[i].flags & RPX_OPT_MANIFEST_TASK)     ? "task"
                                                                           : "defaults,model")
                : NULL;
        Py_XDECREF(dflt);
        Py_XDECREF(choices);
        Py_XDECREF(fe);
        if (!d || PyList_Append(list, d) != 0) Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

/* ---- one-glance results and compare (the package's Report, compare) ------- */

/* A report's JSON text as jansson, or NULL with RpxprofError raised. */
static json_t *parse_report(const char *text, const char *what)
{
    json_error_t je;
    json_t *r = json_loads(text, 0, &je);
    char msg[300];
    if (!json_is_object(r)) {
        json_decref(r);
        snprintf(msg, sizeof msg, "%s: not a report of rpxprof (line %d: %s)", what, je.line, je.text);
        raise_error(msg, RPX_EXIT_FAILURE);
        return NULL;
    }
    return r;
}

/* summary(report_json, asked_processes) -> the text `rpxprof run` prints after a run
 * (rpx_report_summary), the advice worded for Python. */
static PyObject *core_summary(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"report", "asked_processes", NULL};
    const char *text;
    long asked = 0;
    json_t *r;
    char *s;
    PyObject *out;
    rpx_summary_opts o;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|l", names, &text, &asked)) return NULL;
    if (!(r = parse_report(text, "report"))) return NULL;
    o.asked_processes = asked;
    o.python = 1;
    s = rpx_report_summary(r, &o);
    json_decref(r);
    if (!s) return PyErr_NoMemory();
    out = PyUnicode_FromString(s);
    free(s);
    return out;
}

/* format_3g(x) -> the summary's number rule (rpx_format_3g): "86.0", "0.000100". */
static PyObject *core_format_3g(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"x", NULL};
    double x;
    char buf[40];
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "d", names, &x)) return NULL;
    return PyUnicode_FromString(rpx_format_3g(buf, sizeof buf, x));
}

/* format_si(x) -> a count by the summary's rule with an SI prefix (rpx_format_si):
 * "1.81 G", "11.7 M". */
static PyObject *core_format_si(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"x", NULL};
    double x;
    char buf[48];
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "d", names, &x)) return NULL;
    return PyUnicode_FromString(rpx_format_si(buf, sizeof buf, x));
}

/* report_row(report_json) -> the report's one flat row as JSON (rpx_report_row):
 * Report.to_row's columns, in order. */
static PyObject *core_report_row(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"report", NULL};
    const char *text;
    json_t *r, *row;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s", names, &text)) return NULL;
    if (!(r = parse_report(text, "report"))) return NULL;
    row = rpx_report_row(r);
    json_decref(r);
    return json_text(row);
}

/* html_glance(report_json) -> one report at a glance as an HTML fragment
 * (rpx_html_glance): Report._repr_html_. */
static PyObject *core_html_glance(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"report", NULL};
    const char *text;
    json_t *r;
    char *html = NULL;
    PyObject *out;
    rpx_error err = {0};
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s", names, &text)) return NULL;
    if (!(r = parse_report(text, "report"))) return NULL;
    if (rpx_html_glance(r, &html, &err) != 0) {
        json_decref(r);
        return raise_error(err.message, RPX_EXIT_FAILURE);
    }
    json_decref(r);
    out = PyUnicode_FromString(html);
    free(html);
    return out;
}

/* plot_svg(report_json, timeline=False) -> the SVG of `rpxprof plot` for one report
 * (rpx_plot_svg): its latency distribution with the p50's interval, or its timeline. */
static PyObject *core_plot_svg(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"report", "timeline", NULL};
    const char *text;
    int timeline = 0;
    json_t *r;
    rpx_error err = {0};
    char *svg = NULL;
    PyObject *out = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|p", names, &text, &timeline)) return NULL;
    if (!(r = parse_report(text, "report"))) return NULL;
    if (rpx_plot_report_svg(r, timeline, &svg, &err) != 0) {
        if (err.code == RPX_ENOMEM) PyErr_NoMemory();
        else raise_error(err.message, RPX_EXIT_FAILURE);
    } else {
        out = PyUnicode_FromString(svg);
    }
    free(svg);
    json_decref(r);
    return out;
}

/* compare(base_path, new_path, threshold=0.01, paired_by_cpu=False, design=None, base_name=None,
 * new_name=None, session_spread=-1) -> (result_json, text): rpx_compare_reports and
 * rpx_compare_text, as `rpxprof compare BASE NEW [--session-spread SIGMA]`; a design
 * (compare_run's) means both were measured in one session. */
static PyObject *core_compare(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"base", "new", "threshold", "paired_by_cpu", "design", "base_name",
                            "new_name", "session_spread", "history", NULL};
    const char *base, *new_path, *design = NULL, *base_name = NULL, *new_name = NULL;
    const char *history = NULL;
    double sigma = -1;
    rpx_compare_opts o = {0.01, 0.95, 0};
    rpx_error err = {0};
    json_t *res = NULL, *spread = NULL;
    char *text, *js;
    PyObject *out;
    int rc;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|dpzzzdz", names, &base, &new_path,
                                     &o.threshold, &o.paired_by_cpu, &design, &base_name,
                                     &new_name, &sigma, &history))
        return NULL;
    if (!(o.threshold > 0 && o.threshold < 1))
        return raise_error("threshold: a fraction above 0 and below 1 (0.01 for 1 %)", RPX_EXIT_USAGE);
    /* a design is compare_run's: both measured interleaved in one session */
    o.same_session = design != NULL;
    /* two sessions: the spread between them given (session_spread=, as compare
     * --session-spread), or from a history (history=, as compare --history) */
    if (sigma >= 0 && isfinite(sigma))
        spread = json_pack("{ss sf sn ss}", "source", "option", "sigma_between_log", sigma, "df",
                           "how", "given as session_spread");
    else if (history && rpx__core_history_spread(history, base, new_path, &spread, &err) != 0)
        return raise_error(err.message, RPX_EXIT_FAILURE);
    o.session_spread = spread;
    rc = rpx_compare_reports(base, new_path, &o, &res, &err);
    json_decref(spread);
    if (rc != 0) return raise_error(err.message, RPX_EXIT_FAILURE);
    /* compare --run's words for its interleaved design (compare_run.c) */
    if (design) {
        json_object_set_new(res, "interleaved", json_string("ABBA by process"));
        if (strcmp(json_string_value(json_object_get(res, "design")), "independent") == 0)
            json_object_set_new(res, "design", json_string(design));
    }
    /* what the reports are called instead of their (temporary) files */
    if (base_name) json_object_set_new(res, "base", json_string(base_name));
    if (new_name) json_object_set_new(res, "new", json_string(new_name));
    text = rpx_compare_text(res);
    js = rpx_json_dumps(res);
    json_decref(res);
    out = text && js ? Py_BuildValue("(ss)", js, text) : PyErr_NoMemory();
    free(text);
    free(js);
    return out;
}

/* PATH of "PATH:function" into buf (empty when it does not fit): buf */
static const char *file_part(const char *spec, const char *colon, char *buf, size_t size)
{
    size_t n = (size_t)(colon - spec);
    buf[0] = '\0';
    if (n < size) {
        memcpy(buf, spec, n);
        buf[n] = '\0';
    }
    return buf;
}

/* profile_pair(fn_a, fn_b, name_a, name_b, module_a, qualname_a, module_b, qualname_b,
 *              inputs, label=, spread=, args=, kwargs=, and the run options that
 *              `compare --run` takes, by their keys: warmup, repeats, processes (10),
 *              device, precision, unit, cpus, timeout, call_timeout, writable_inputs)
 * inputs None with args (a tuple) / kwargs (a dict or None): each called as
 * fn(*args, **kwargs) with the caller's own objects, as profile() calls one.
 * fn_a/fn_b may be "PATH/module.py:function" (a str): the module imported from that
 * file in each of its workers (py_module_file.h), as `compare --run` takes it.
 * -> ((report_a_json, status_a), (report_b_json, status_b), error): two callables
 * measured as `rpxprof compare --run` measures two targets (rpx_runner_run_pair: their
 * worker processes alternate A B, B A, ...; with spread, pair k on CPU k mod n). */
static PyObject *core_profile_pair(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *fn[2], *out = NULL, *rep[2] = {NULL, NULL};
    PyObject *call_args = Py_None, *call_kwargs = Py_None, *key, *v;
    const char *name[2], *module[2] = {NULL, NULL}, *qualname[2] = {NULL, NULL};
    const char *inputs = NULL, *label = NULL;
    int k, rc;
    Py_ssize_t pos = 0;
    rpx_runner_config c[2];
    rpx_runner_result res[2];
    rpx_target_hooks custom[2];
    core_state st[2];
    char file[2][4096] = {"", ""};
    rpx_error err = {0};
    (void)self;
    memset(st, 0, sizeof st);
    memset(res, 0, sizeof res);
    rpx_runner_config_init(&c[0]);
    c[0].processes = 10;
    if (!PyArg_ParseTuple(args, "OOsszzzzz", &fn[0], &fn[1], &name[0], &name[1], &module[0],
                          &qualname[0], &module[1], &qualname[1], &inputs))
        return NULL;
    while (kw && PyDict_Next(kw, &pos, &key, &v)) {
        const char *kname = PyUnicode_AsUTF8(key);
        const rpx_run_option *o;
        if (!kname) return NULL;
        if (strcmp(kname, "label") == 0) {
            if (v != Py_None && !(label = PyUnicode_AsUTF8(v))) return NULL;
        } else if (strcmp(kname, "args") == 0) call_args = v;
        else if (strcmp(kname, "kwargs") == 0) call_kwargs = v;
        else if (strcmp(kname, "spread") == 0) {
            if ((c[0].spread = PyObject_IsTrue(v)) < 0) return NULL;
        } else if (strcmp(kname, "target_precision") == 0) {
            /* compare_run()'s auto-ranging precision (compare --run has no --target-precision) */
            if (py_option(&c[0], rpx_run_option_find(kname), v) != 0) return NULL;
        } else if ((o = rpx_run_option_find(kname)) && strcmp(o->key, kname) == 0 &&
                   rpx_run_option_accepted(o, RPX_SPELL_COMPARE)) {
            if (py_option(&c[0], o, v) != 0) return NULL;
        } else {
            PyErr_Format(PyExc_TypeError, "profile_pair(): unknown keyword '%s'", kname);
            return NULL;
        }
    }
    if ((call_args != Py_None && !PyTuple_Check(call_args)) ||
        (call_kwargs != Py_None && !PyDict_Check(call_kwargs))) {
        PyErr_SetString(PyExc_TypeError, "args: a tuple, kwargs: a dict");
        return NULL;
    }
    if (!inputs && call_args == Py_None && call_kwargs == Py_None) {
        PyErr_SetString(PyExc_TypeError, "give inputs (an NPZ path) or args/kwargs");
        return NULL;
    }
    for (k = 0; k < 2; k++) { /* a callable, or "PATH/module.py:function" */
        const char *spec = PyUnicode_Check(fn[k]) ? PyUnicode_AsUTF8(fn[k]) : NULL;
        const char *colon = spec ? strrchr(spec, ':') : NULL;
        if (PyUnicode_Check(fn[k]) && !spec) return NULL;
        if (spec && (!colon || !rpx__py_is_module_file(file_part(spec, colon, file[k], sizeof file[k])) ||
                     !colon[1])) {
            PyErr_Format(PyExc_TypeError, "%s: a module's file and its function, "
                         "PATH/module.py:function (\"base/mypkg/model.py:predict\")", spec);
            return NULL;
        }
        if (spec) {
            module[k] = NULL;
            qualname[k] = colon + 1;
        } else if (!PyCallable_Check(fn[k])) {
            PyErr_SetString(PyExc_TypeError, "fn_a and fn_b must be callable, or a module's "
                                             "file and its function: \"base/mypkg/model.py:predict\"");
            return NULL;
        }
    }
    c[0].inputs = inputs;
    c[0].inputs_label = label;
    c[0].isolate = 1;
    c[0].spelling = RPX_SPELL_PY;
    c[0].output = NULL;
    c[0].model = name[0];
    /* ranges and rules, worded for Python (the runner checks them again) */
    if (rpx_runner_config_check(&c[0], RPX_SPELL_PY, &err) != 0)
        return raise_error(err.message, RPX_EXIT_USAGE);
    c[0].model = NULL;
    c[1] = c[0];
    for (k = 0; k < 2; k++) {
        custom_target(&custom[k], &st[k], fn[k], module[k], qualname[k]);
        /* a module's file: its function is looked up in each worker (import_file) */
        if (file[k][0] && !(st[k].file = strdup(file[k]))) {
            PyErr_NoMemory();
            goto done;
        }
        /* the caller's own objects (as core_profile): no inputs file */
        st[k].args = call_args != Py_None ? call_args
                     : call_kwargs != Py_None ? PyTuple_New(0) : NULL;
        if (call_args != Py_None) Py_INCREF(call_args);
        st[k].kwargs = call_kwargs != Py_None ? call_kwargs : NULL;
        c[k].model = name[k];
        c[k].target.custom = &custom[k];
    }
    rc = rpx_runner_run_pair(&c[0], &c[1], &res[0], &res[1], &err);
    /* a target whose first process failed stops the pair: its report says why */
    if (rc != 0 && !(res[0].report && res[0].status != RPX_RUNNER_COMPLETE) &&
        !(res[1].report && res[1].status != RPX_RUNNER_COMPLETE)) {
        raise_error(err.message[0] ? err.message : rpx_strerror(rc),
                    rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE);
        goto done;
    }
    for (k = 0; k < 2; k++) {
        if (res[k].report) {
            rep[k] = json_text(json_incref(res[k].report));
            if (!rep[k]) goto done;
        } else {
            Py_INCREF(Py_None);
            rep[k] = Py_None;
        }
    }
    out = Py_BuildValue("((Os)(Os)s)", rep[0], res[0].report ? status_text(res[0].status) : "failed",
                        rep[1], res[1].report ? status_text(res[1].status) : "failed",
                        res[0].report && res[0].status != RPX_RUNNER_COMPLETE ? res[0].error
                        : res[1].report && res[1].status != RPX_RUNNER_COMPLETE ? res[1].error
                                                                                : err.message);
done:
    for (k = 0; k < 2; k++) {
        Py_XDECREF(rep[k]);
        rpx_runner_result_free(&res[k]);
        rpx__pycall_clear(&st[k].call);
        Py_XDECREF(st[k].args);
        free(st[k].file);
    }
    return out;
}

/* profile_many(fn, name, module, qualname, calls, label=, spread=, and the run options
 * compare --run takes, by their keys) -> ([(report_json, status), ...], error): one
 * callable measured at K points (rpxprof.sweep), calls a list of (args tuple, kwargs
 * dict or None), interleaved by process as `rpxprof sweep` measures its points
 * (rpx_runner_run_many). */
static PyObject *core_profile_many(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *fn, *calls, *key, *v, *list = NULL, *out = NULL;
    const char *name, *module = NULL, *qualname = NULL, *label = NULL;
    Py_ssize_t pos = 0, k, n;
    rpx_runner_config base, *c = NULL;
    rpx_runner_result *res = NULL;
    rpx_target_hooks *custom = NULL;
    core_state *st = NULL;
    rpx_error err = {0};
    int rc;
    (void)self;
    rpx_runner_config_init(&base);
    base.processes = 6;
    base.spread = 1;
    if (!PyArg_ParseTuple(args, "OszzO", &fn, &name, &module, &qualname, &calls)) return NULL;
    while (kw && PyDict_Next(kw, &pos, &key, &v)) {
        const char *kname = PyUnicode_AsUTF8(key);
        const rpx_run_option *o;
        if (!kname) return NULL;
        if (strcmp(kname, "label") == 0) {
            if (v != Py_None && !(label = PyUnicode_AsUTF8(v))) return NULL;
        } else if (strcmp(kname, "spread") == 0) {
            if ((base.spread = PyObject_IsTrue(v)) < 0) return NULL;
        } else if ((o = rpx_run_option_find(kname)) && strcmp(o->key, kname) == 0 &&
                   rpx_run_option_accepted(o, RPX_SPELL_COMPARE)) {
            if (py_option(&base, o, v) != 0) return NULL;
        } else {
            PyErr_Format(PyExc_TypeError, "sweep(): unknown keyword '%s'", kname);
            return NULL;
        }
    }
    if (!PyCallable_Check(fn) || !PyList_Check(calls) || (n = PyList_Size(calls)) < 1) {
        PyErr_SetString(PyExc_TypeError, "profile_many: a callable and a list of calls");
        return NULL;
    }
    base.inputs_label = label;
    base.isolate = 1;
    base.spelling = RPX_SPELL_PY;
    base.model = name;
    if (rpx_runner_config_check(&base, RPX_SPELL_PY, &err) != 0)
        return raise_error(err.message, RPX_EXIT_USAGE);
    c = calloc((size_t)n, sizeof *c);
    res = calloc((size_t)n, sizeof *res);
    custom = calloc((size_t)n, sizeof *custom);
    st = calloc((size_t)n, sizeof *st);
    if (!c || !res || !custom || !st) {
        PyErr_NoMemory();
        goto done;
    }
    for (k = 0; k < n; k++) {
        PyObject *item = PyList_GetItem(calls, k), *a, *kwa;
        if (!PyTuple_Check(item) || PyTuple_Size(item) != 2 ||
            !PyTuple_Check(a = PyTuple_GetItem(item, 0)) ||
            ((kwa = PyTuple_GetItem(item, 1)) != Py_None && !PyDict_Check(kwa))) {
            PyErr_SetString(PyExc_TypeError, "profile_many: each call (args tuple, kwargs dict or None)");
            goto done;
        }
        c[k] = base;
        custom_target(&custom[k], &st[k], fn, module, qualname);
        Py_INCREF(a);
        st[k].args = a;
        st[k].kwargs = kwa != Py_None ? kwa : NULL;
        c[k].target.custom = &custom[k];
    }
    rc = rpx_runner_run_many(c, (int)n, res, &err);
    if (rc != 0 && !res[0].report) {
        raise_error(err.message[0] ? err.message : rpx_strerror(rc),
                    rc == RPX_EUSAGE ? RPX_EXIT_USAGE : RPX_EXIT_FAILURE);
        goto done;
    }
    if (!(list = PyList_New(n))) goto done;
    for (k = 0; k < n; k++) {
        PyObject *rep = res[k].report ? json_text(json_incref(res[k].report)) : (Py_INCREF(Py_None), Py_None);
        if (!rep) goto done;
        PyList_SetItem(list, k, Py_BuildValue("(Ns)", rep, res[k].report ? status_text(res[k].status)
                                                                        : "failed"));
    }
    out = Py_BuildValue("(Os)", list, err.message);
done:
    Py_XDECREF(list);
    for (k = 0; st && k < n; k++) {
        rpx_runner_result_free(&res[k]);
        rpx__pycall_clear(&st[k].call);
        Py_XDECREF(st[k].args);
    }
    free(c);
    free(res);
    free(custom);
    free(st);
    return out;
}

/* sweep_json(model, vary_json, size_of, points_json, reports) -> sweep.json text:
 * what the points of rpxprof.sweep say together (src/sweep/sweep.c). points_json:
 * [{value, label, index, size, items, invalid_reason}]; reports: JSON texts or None. */
static PyObject *core_sweep_json(PyObject *self, PyObject *args)
{
    const char *model, *vary_text, *size_of, *points_text;
    PyObject *reports, *out = NULL;
    json_t *vary = NULL, *points = NULL, *sw = NULL, **reps = NULL;
    rpx_sweep_point *pts = NULL;
    json_error_t je;
    rpx_error err = {0};
    size_t i, n;
    (void)self;
    if (!PyArg_ParseTuple(args, "sszsO", &model, &vary_text, &size_of, &points_text, &reports))
        return NULL;
    vary = json_loads(vary_text, 0, &je);
    points = json_loads(points_text, 0, &je);
    n = json_array_size(points);
    if (!vary || !points || !PyList_Check(reports) || (size_t)PyList_Size(reports) != n) {
        PyErr_SetString(PyExc_TypeError, "sweep_json: vary and points JSON, one report a point");
        goto done;
    }
    pts = calloc(n ? n : 1, sizeof *pts);
    reps = calloc(n ? n : 1, sizeof *reps);
    if (!pts || !reps) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < n; i++) {
        const json_t *p = json_array_get(points, i), *idx = json_object_get(p, "index");
        PyObject *r = PyList_GetItem(reports, (Py_ssize_t)i);
        size_t a;
        pts[i].value = json_incref(json_object_get(p, "value"));
        snprintf(pts[i].label, sizeof pts[i].label, "%s", json_string_value(json_object_get(p, "label")));
        pts[i].size = json_is_number(json_object_get(p, "size")) ? json_number_value(json_object_get(p, "size")) : NAN;
        pts[i].items = json_is_number(json_object_get(p, "items")) ? json_number_value(json_object_get(p, "items")) : 1;
        for (a = 0; a < RPX_SWEEP_MAX_VARY && a < json_array_size(idx); a++)
            pts[i].index[a] = (int)json_integer_value(json_array_get(idx, a));
        if (json_is_string(json_object_get(p, "invalid_reason")))
            snprintf(pts[i].invalid_reason, sizeof pts[i].invalid_reason, "%s",
                     json_string_value(json_object_get(p, "invalid_reason")));
        if (r != Py_None) {
            const char *t = PyUnicode_AsUTF8(r);
            if (!t) goto done;
            reps[i] = json_loads(t, 0, &je);
            pts[i].report = reps[i];
        }
    }
    if (rpx_sweep_json(model, vary, size_of, pts, n, &sw, &err) != 0) {
        raise_error(err.message, RPX_EXIT_FAILURE);
        goto done;
    }
    out = json_text(sw);
    sw = NULL;
done:
    for (i = 0; pts && i < n; i++) {
        json_decref(pts[i].value);
        json_decref(reps[i]);
    }
    free(pts);
    free(reps);
    json_decref(vary);
    json_decref(points);
    json_decref(sw);
    return out;
}

/* the sweep's page (rpx_html_sweep) of a sweep.json text */
static PyObject *core_html_sweep(PyObject *self, PyObject *args)
{
    const char *text;
    json_t *sw;
    json_error_t je;
    char *html = NULL;
    rpx_error err = {0};
    PyObject *out;
    (void)self;
    if (!PyArg_ParseTuple(args, "s", &text)) return NULL;
    if (!(sw = json_loads(text, 0, &je))) return raise_error(je.text, RPX_EXIT_FAILURE);
    if (rpx_html_sweep(sw, &html, &err) != 0) {
        json_decref(sw);
        return raise_error(err.message, RPX_EXIT_FAILURE);
    }
    json_decref(sw);
    out = PyUnicode_FromString(html);
    free(html);
    return out;
}

/* Every call into the library runs in the C locale on this thread (uselocale), whatever
 * the user's script set with locale.setlocale: numbers are read from /proc and written
 * into formulas and notes with a decimal point, and system errors read in English, as
 * from the CLI. The profiled callable itself runs in the process's locale (stage.c). */
typedef PyObject *(*core_fn)(PyObject *self, PyObject *args, PyObject *kw);

static PyObject *in_c_locale(core_fn fn, PyObject *self, PyObject *args, PyObject *kw)
{
    static locale_t c; /* made once, under the GIL */
    locale_t prev = (locale_t)0;
    PyObject *r;
    if (!c) c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (c) prev = uselocale(c);
    r = fn(self, args, kw);
    if (prev) uselocale(prev);
    return r;
}

static PyObject *gpus_kw(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)kw;
    return core_gpus(self, args);
}

static PyObject *builtin_gpus_kw(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)kw;
    return core_builtin_gpus(self, args);
}

static PyObject *write_report_kw(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)kw;
    return core_write_report(self, args);
}

#define RPX_C_LOCALE(fn)                                                                       \
    static PyObject *fn##_c(PyObject *self, PyObject *args, PyObject *kw)                      \
    {                                                                                          \
        return in_c_locale(fn, self, args, kw);                                                \
    }
RPX_C_LOCALE(core_profile)
RPX_C_LOCALE(core_cost)
RPX_C_LOCALE(core_roofline)
RPX_C_LOCALE(core_system_card)
RPX_C_LOCALE(core_summary)
RPX_C_LOCALE(core_format_3g)
RPX_C_LOCALE(core_format_si)
RPX_C_LOCALE(core_report_row)
RPX_C_LOCALE(core_html_glance)
RPX_C_LOCALE(core_plot_svg)
RPX_C_LOCALE(core_compare)
RPX_C_LOCALE(core_profile_pair)
RPX_C_LOCALE(core_profile_many)

/* the history's calls (core_history.c), raising this module's RpxprofError */
static PyObject *core_history_record(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return rpx__core_history_record(raise_error, args, kw);
}

static PyObject *core_history_compare(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return rpx__core_history_compare(raise_error, args, kw);
}
RPX_C_LOCALE(core_history_record)
RPX_C_LOCALE(core_history_compare)

static PyObject *core_gpus_c(PyObject *self, PyObject *noargs)
{
    return in_c_locale(gpus_kw, self, noargs, NULL);
}

static PyObject *core_builtin_gpus_c(PyObject *self, PyObject *noargs)
{
    return in_c_locale(builtin_gpus_kw, self, noargs, NULL);
}

static PyObject *core_write_report_c(PyObject *self, PyObject *args)
{
    return in_c_locale(write_report_kw, self, args, NULL);
}

static PyObject *write_trace_kw(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)kw;
    return core_write_trace(self, args);
}

static PyObject *core_write_trace_c(PyObject *self, PyObject *args)
{
    return in_c_locale(write_trace_kw, self, args, NULL);
}

static PyMethodDef methods[] = {
    {"profile", (PyCFunction)(void (*)(void))core_profile_c, METH_VARARGS | METH_KEYWORDS,
     "Run a callable through rpxprof's runner; see rpxprof.profile."},
    {"cost", (PyCFunction)(void (*)(void))core_cost_c, METH_VARARGS | METH_KEYWORDS,
     "The cost JSON of an ONNX model (path or bytes)."},
    {"roofline", (PyCFunction)(void (*)(void))core_roofline_c, METH_VARARGS | METH_KEYWORDS,
     "Roofline bounds JSON."},
    {"system_card", (PyCFunction)(void (*)(void))core_system_card_c, METH_VARARGS | METH_KEYWORDS,
     "The system card JSON."},
    {"gpus", core_gpus_c, METH_NOARGS, "The GPU table as JSON."},
    {"builtin_gpus", core_builtin_gpus_c, METH_NOARGS, "The built-in GPU table as JSON."},
    {"run_options", core_run_options, METH_NOARGS,
     "A run's options: name, key, kind, default, choices, range, help."},
    {"write_report", core_write_report_c, METH_VARARGS, "Write a report through the output guard."},
    {"write_trace", core_write_trace_c, METH_VARARGS,
     "Write a report's Chrome trace through the output guard (as rpxprof run --trace)."},
    {"_set_error_class", set_error_class, METH_O, "The package's RpxprofError."},
    {"summary", (PyCFunction)(void (*)(void))core_summary_c, METH_VARARGS | METH_KEYWORDS,
     "The text summary of a report (as rpxprof run prints it)."},
    {"format_3g", (PyCFunction)(void (*)(void))core_format_3g_c, METH_VARARGS | METH_KEYWORDS,
     "A number by the summary's rule: three significant digits, no exponent."},
    {"format_si", (PyCFunction)(void (*)(void))core_format_si_c, METH_VARARGS | METH_KEYWORDS,
     "A count by the summary's rule with an SI prefix: 1.81 G."},
    {"report_row", (PyCFunction)(void (*)(void))core_report_row_c, METH_VARARGS | METH_KEYWORDS,
     "The report's one flat row as JSON (Report.to_row)."},
    {"html_glance", (PyCFunction)(void (*)(void))core_html_glance_c, METH_VARARGS | METH_KEYWORDS,
     "One report at a glance as an HTML fragment (Report._repr_html_)."},
    {"plot_svg", (PyCFunction)(void (*)(void))core_plot_svg_c, METH_VARARGS | METH_KEYWORDS,
     "The SVG figure of one report (as rpxprof plot draws it)."},
    {"compare", (PyCFunction)(void (*)(void))core_compare_c, METH_VARARGS | METH_KEYWORDS,
     "Two reports compared (as rpxprof compare): (result JSON, text)."},
    {"profile_pair", (PyCFunction)(void (*)(void))core_profile_pair_c, METH_VARARGS | METH_KEYWORDS,
     "Two callables measured interleaved (as rpxprof compare --run)."},
    {"profile_many", (PyCFunction)(void (*)(void))core_profile_many_c, METH_VARARGS | METH_KEYWORDS,
     "One callable measured at several points, interleaved (as rpxprof sweep)."},
    {"sweep_json", core_sweep_json, METH_VARARGS, "What a sweep's points say together: sweep.json."},
    {"html_sweep", core_html_sweep, METH_VARARGS, "The sweep's page of a sweep.json text."},
    {"history_record", (PyCFunction)(void (*)(void))core_history_record_c,
     METH_VARARGS | METH_KEYWORDS, "Record a report's session in a history (JSON text)."},
    {"history_compare", (PyCFunction)(void (*)(void))core_history_compare_c,
     METH_VARARGS | METH_KEYWORDS,
     "A report's session against its series in a history: the verdict (JSON text)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "rpxprof._core",
                                        "librpxprof for the rpxprof package", -1, methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void);
PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (m) PyModule_AddStringConstant(m, "version", RPX_VERSION);
    return m;
}
