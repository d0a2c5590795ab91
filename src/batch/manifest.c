/* manifest.c — owns the batch manifest (schemas/manifest.json): parsing,
 * checking, path resolution, the job list, and whether an existing report
 * already answers a job (--resume). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_keys.h"
#include "common/user_file.h"
#include "loader/kinds.h"
#include "rpxprof/manifest.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"
#include "rpxprof/options.h"
#include "rpxprof/runner.h"
#include "rpxprof/target.h"

struct rpx_manifest {
    json_t *root;                 /* keeps every borrowed string alive */
    char **owned;                 /* resolved paths */
    size_t nowned, capowned;
    rpx_batch_job *jobs;
    size_t njobs, capjobs;
};

static char *own(rpx_manifest *m, char *s)
{
    if (!s) return NULL;
    if (m->nowned == m->capowned) {
        size_t cap = m->capowned ? 2 * m->capowned : 16;
        char **p = realloc(m->owned, cap * sizeof *p);
        if (!p) { free(s); return NULL; }
        m->owned = p;
        m->capowned = cap;
    }
    m->owned[m->nowned++] = s;
    return s;
}

/* The length of `dir` without its trailing slashes (a lone "/" keeps its). */
static size_t dir_len(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    return n;
}

/* `rel` relative to the folder of `manifest` (absolute paths unchanged), with
 * no doubled or trailing slash where the two meet or at the end ("sub//m.json"
 * and "./frames/" give "sub/frames"): the runner appends "/NAME.npz" to a folder. */
static char *resolve(const char *manifest, const char *rel)
{
    const char *slash = strrchr(manifest, '/');
    size_t dlen = slash ? (size_t)(slash - manifest) : 0, rlen;
    char *out;
    while (dlen > 0 && manifest[dlen - 1] == '/') dlen--;
    if (rel[0] != '/' && slash) {
        while (strncmp(rel, "./", 2) == 0) rel += 2;
        while (rel[0] == '/' && rel[1]) rel++; /* after "./" only: "./" + "/x" */
    }
    rlen = dir_len(rel);
    if (rel[0] == '/' || !slash) return strndup(rel, rlen);
    out = malloc(dlen + 1 + rlen + 1);
    if (!out) return NULL;
    memcpy(out, manifest, dlen);
    out[dlen] = '/';
    memcpy(out + dlen + 1, rel, rlen);
    out[dlen + 1 + rlen] = '\0';
    return out;
}

/* A --model text with the file its kind names resolved (a shared object's
 * PATH); other kinds and texts unchanged. */
static char *resolve_model(const char *manifest, const char *model)
{
    const rpx_kind *kind = rpx__kind_of_spec(model);
    long plen = kind->local_path ? kind->local_path(model) : -1;
    char *path, *res, *out;
    if (plen <= 0) return strdup(model); /* a module:function, a URL, the demo */
    path = strndup(model, (size_t)plen);
    if (!path) return NULL;
    res = resolve(manifest, path);
    free(path);
    if (!res) return NULL;
    out = malloc(strlen(res) + strlen(model + plen) + 1);
    if (out) {
        strcpy(out, res);
        strcat(out, model + plen);
    }
    free(res);
    return out;
}

static int bad(rpx_error *err, const char *path, const char *field, const char *fix)
{
    return rpx_error_set(err, RPX_EFORMAT, "%s: %s: %s", path, field, fix);
}

/* A string field: required (returns NULL and sets err) or optional. */
static const char *get_str(const json_t *o, const char *key, int required, const char *path,
                           const char *where, rpx_error *err, int *rc)
{
    json_t *v = json_object_get(o, key);
    char field[640];
    snprintf(field, sizeof field, "%s.%s", where, key);
    if (!v || json_is_null(v)) {
        if (required) *rc = bad(err, path, field, "missing; give a non-empty string");
        return NULL;
    }
    if (!json_is_string(v)) {
        char fix[128];
        snprintf(fix, sizeof fix, "has the wrong type: expected a non-empty string, got %s",
                 rpx_json_type_name(v));
        *rc = bad(err, path, field, fix);
        return NULL;
    }
    if (json_string_length(v) == 0) {
        *rc = bad(err, path, field, "is empty; give a non-empty string");
        return NULL;
    }
    return json_string_value(v);
}

/* "has the wrong type: expected WHAT, got TYPE" */
static int wrong_type(rpx_error *err, const char *path, const char *field, const char *what,
                      const json_t *v)
{
    return rpx_error_set(err, RPX_EFORMAT, "%s: %s: has the wrong type: expected %s, got %s",
                         path, field, what, rpx_json_type_name(v));
}

/* A task's inputs: a non-empty string (a file, or a folder of *.npz), or a
 * non-empty array of them (distinct samples). */
static void check_inputs(const json_t *o, const char *path, const char *where, rpx_error *err,
                         int *rc)
{
    json_t *v = json_object_get(o, "inputs");
    size_t k;
    char field[700];
    if (!json_is_array(v)) {
        get_str(o, "inputs", 1, path, where, err, rc);
        return;
    }
    snprintf(field, sizeof field, "%s.inputs", where);
    if (json_array_size(v) == 0) {
        *rc = bad(err, path, field, "is an empty list; give an NPZ file, a folder of them, or a "
                  "list of NPZ files (one distinct sample each)");
        return;
    }
    for (k = 0; k < json_array_size(v); k++) {
        json_t *e = json_array_get(v, k);
        snprintf(field, sizeof field, "%s.inputs[%zu]", where, k);
        if (!json_is_string(e)) {
            *rc = wrong_type(err, path, field, "a non-empty string (an NPZ file)", e);
            return;
        }
        if (json_string_length(e) == 0) {
            *rc = bad(err, path, field, "is empty; give an NPZ file");
            return;
        }
    }
}

static int add_job(rpx_manifest *m, const rpx_batch_job *j)
{
    if (m->njobs == m->capjobs) {
        size_t cap = m->capjobs ? 2 * m->capjobs : 16;
        rpx_batch_job *p = realloc(m->jobs, cap * sizeof *p);
        if (!p) return RPX_ENOMEM;
        m->jobs = p;
        m->capjobs = cap;
    }
    m->jobs[m->njobs++] = *j;
    return 0;
}

static int valid_name(const char *s)
{
    if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
    for (; *s; s++)
        if (*s == '/' || (unsigned char)*s < 0x20) return 0;
    return 1;
}

#define NKEYS(a) (sizeof(a) / sizeof(a)[0])
static const char *const top_keys[] = {"schema", "description", "defaults", "tasks", "models"};
/* The keys of a task and of a model that are not run options. The run options
 * each level takes come from the options' table (include/rpxprof/options.h:
 * RPX_OPT_IN_MANIFEST, and RPX_OPT_MANIFEST_MODEL/_DEFAULTS/_TASK for those
 * taken at one level only), read and checked through it. */
static const char *const task_own[] = {"inputs", "meta"};
static const char *const model_own[] = {"name", "model", "tasks"};

typedef enum level { L_DEFAULTS, L_TASK, L_MODEL } level;

static int level_takes(const rpx_run_option *o, level l)
{
    unsigned only = o->flags & (RPX_OPT_MANIFEST_MODEL | RPX_OPT_MANIFEST_DEFAULTS |
                                RPX_OPT_MANIFEST_TASK);
    if (!rpx_run_option_accepted(o, RPX_SPELL_MANIFEST)) return 0;
    if (l == L_TASK) return only == RPX_OPT_MANIFEST_TASK;
    if (l == L_MODEL) return only == 0 || only == RPX_OPT_MANIFEST_MODEL;
    return only == 0 || only == RPX_OPT_MANIFEST_DEFAULTS;
}

/* Every key of `o` is the level's own or a run option it takes. */
static int check_level_keys(const json_t *o, level l, const char *path, const char *where,
                            rpx_error *err)
{
    const char *keys[RPX_RUN_OPTIONS_MAX + NKEYS(model_own) + NKEYS(task_own)];
    size_t n = 0, i, nt;
    const rpx_run_option *t = rpx_run_options(&nt);
    if (l == L_TASK)
        for (i = 0; i < NKEYS(task_own); i++) keys[n++] = task_own[i];
    if (l == L_MODEL)
        for (i = 0; i < NKEYS(model_own); i++) keys[n++] = model_own[i];
    for (i = 0; i < nt; i++)
        if (level_takes(&t[i], l)) keys[n++] = t[i].key;
    return rpx_json_check_keys(o, keys, n, path, where, err);
}

/* gpus: an array of GPU keys, joined as --gpu takes them ("a,b"); NULL for [] */
static int read_gpus(rpx_manifest *m, const json_t *v, const char **out, const char *path,
                     const char *where, rpx_error *err)
{
    size_t k, len = 1;
    char *g, f[320];
    snprintf(f, sizeof f, "%s.gpus", where);
    if (!json_is_array(v)) return wrong_type(err, path, f, "an array of GPU keys (rpxprof gpus)", v);
    for (k = 0; k < json_array_size(v); k++) {
        snprintf(f, sizeof f, "%s.gpus[%zu]", where, k);
        if (!json_is_string(json_array_get(v, k)))
            return wrong_type(err, path, f, "a GPU key (rpxprof gpus)", json_array_get(v, k));
        if (json_string_length(json_array_get(v, k)) == 0)
            return bad(err, path, f, "is empty; give a GPU key (rpxprof gpus)");
        len += json_string_length(json_array_get(v, k)) + 1;
    }
    if (!(g = own(m, calloc(1, len)))) return RPX_ENOMEM;
    for (k = 0; k < json_array_size(v); k++) {
        if (k) strcat(g, ",");
        strcat(g, json_string_value(json_array_get(v, k)));
    }
    *out = json_array_size(v) ? g : NULL;
    return 0;
}

/* The JSON value of a key whose text is not the table's: gpus (an array),
 * cpus (a list, or one CPU as a number), check_outputs (true/false, or a
 * folder: its reference_outputs, as `rpxprof run --check-outputs DIR`).
 * 1 when it is not one of them. */
static int read_special(rpx_manifest *m, const json_t *lv, const json_t *v,
                        const rpx_run_option *o, rpx_runner_config *c, const char *path,
                        const char *where, rpx_error *err)
{
    char f[320], buf[32];
    snprintf(f, sizeof f, "%s.%s", where, o->key);
    if (strcmp(o->key, "gpus") == 0) {
        int rc = read_gpus(m, v, &c->gpus, path, where, err);
        if (rc == 0 && c->gpus) rpx_run_option_set_text(c, o, c->gpus, f, err); /* given */
        return rc;
    }
    if (strcmp(o->key, "cpus") == 0 && !json_is_string(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return wrong_type(err, path, f, "a list of CPUs such as \"1\", \"2-3\" or \"0,2\" (or "
                              "one CPU as a number)", v);
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        if (!(c->cpus = own(m, strdup(buf)))) return RPX_ENOMEM;
        return rpx_run_option_set_text(c, o, c->cpus, f, err) ? RPX_EFORMAT : 0;
    }
    if (strcmp(o->key, "check_outputs") == 0 && !json_is_boolean(v)) {
        if (!json_is_string(v))
            return wrong_type(err, path, f, "true, false or a folder written by save_outputs", v);
        if (json_object_get(lv, "reference_outputs"))
            return rpx_error_set(err, RPX_EFORMAT, "%s: %s: a folder here is reference_outputs; "
                                 "give one of them", path, f);
        rpx_run_option_set_number(c, o, 1, f, err);
        return rpx_run_option_set_text(c, rpx_run_option_find("reference_outputs"),
                                       json_string_value(v), f, err) ? RPX_EFORMAT : 0;
    }
    return 1;
}

/* One run option of a level into c, through the options' table: the JSON type
 * the option takes ("has the wrong type: expected ..."), then the table's range
 * and words, named "PATH: WHERE.KEY" (as --KEY on the command line). */
static int read_option(rpx_manifest *m, const json_t *lv, const rpx_run_option *o,
                       rpx_runner_config *c, const char *path, const char *where, rpx_error *err)
{
    const json_t *v = json_object_get(lv, o->key);
    char label[700], range[400];
    const char *what;
    int rc;
    snprintf(label, sizeof label, "%s: %s.%s", path, where, o->key);
    if ((rc = read_special(m, lv, v, o, c, path, where, err)) != 1) return rc;
    rpx_run_option_range_text(o, range, sizeof range);
    what = range;
    switch (o->kind) {
    case RPX_OPT_FLAG:
        if (json_is_boolean(v)) return rpx_run_option_set_number(c, o, json_is_true(v), label, err);
        what = "true or false";
        break;
    case RPX_OPT_INT:
        if (json_is_integer(v))
            rc = rpx_run_option_set_number(c, o, (double)json_integer_value(v), label, err);
        else rc = 1;
        if (rc != 1) return rc ? RPX_EFORMAT : 0;
        break;
    case RPX_OPT_STRING:
    case RPX_OPT_ENUM:
        if (json_is_string(v))
            return rpx_run_option_set_text(c, o, json_string_value(v), label, err) ? RPX_EFORMAT
                                                                                    : 0;
        if (o->kind == RPX_OPT_STRING) what = "a non-empty string";
        break;
    default: /* a number, or its text (a share: "1%"; a count: "4878.9e9") */
        if (json_is_number(v))
            return rpx_run_option_set_number(c, o, json_number_value(v), label, err) ? RPX_EFORMAT
                                                                                      : 0;
        if (json_is_string(v))
            return rpx_run_option_set_text(c, o, json_string_value(v), label, err) ? RPX_EFORMAT
                                                                                    : 0;
        break;
    }
    return rpx_error_set(err, RPX_EFORMAT, "%s: has the wrong type: expected %s, got %s", label,
                         what, rpx_json_type_name(v));
}

/* Every run option the level `lv` gives (absent or null: what c has). */
static int read_level(rpx_manifest *m, const json_t *lv, level l, rpx_runner_config *c,
                      const char *path, const char *where, rpx_error *err)
{
    size_t i, nt;
    const rpx_run_option *t = rpx_run_options(&nt);
    int rc;
    for (i = 0; lv && i < nt; i++) {
        const json_t *v = json_object_get(lv, t[i].key);
        if (!level_takes(&t[i], l) || !v || json_is_null(v)) continue;
        if ((rc = read_option(m, lv, &t[i], c, path, where, err)) != 0) return rc;
    }
    return 0;
}

/* DIR/TASK/MODEL of a manifest's output folder (resolved against the manifest) */
static const char *job_folder(rpx_manifest *m, const char *path, const char *dir,
                              const char *task, const char *model)
{
    char *root, *p;
    size_t len;
    if (!dir) return NULL;
    root = resolve(path, dir);
    if (!root) return NULL;
    len = strlen(root) + strlen(task) + strlen(model) + 3;
    p = malloc(len);
    if (p) snprintf(p, len, "%s/%s/%s", root, task, model);
    free(root);
    return own(m, p);
}

/* schema, description and defaults (the run options every job starts from) */
static int parse_top(rpx_manifest *m, const char *path, rpx_runner_config *d, rpx_error *err)
{
    json_t *root = m->root, *v, *defaults;
    int rc;
    if (!json_is_object(root)) return wrong_type(err, path, "(top level)", "a JSON object", root);
    if ((rc = rpx_json_check_keys(root, top_keys, NKEYS(top_keys), path, NULL, err))) return rc;
    v = json_object_get(root, "schema");
    if (!v)
        return bad(err, path, "schema", "missing; give \"" RPX_MANIFEST_SCHEMA "\"");
    if (!json_is_string(v))
        return wrong_type(err, path, "schema", "the string \"" RPX_MANIFEST_SCHEMA "\"", v);
    if (strcmp(json_string_value(v), RPX_MANIFEST_SCHEMA) != 0)
        return rpx_error_set(err, RPX_EFORMAT, "%s: schema: must be \"" RPX_MANIFEST_SCHEMA
                             "\", got \"%.200s\"", path, json_string_value(v));
    v = json_object_get(root, "description");
    if (v && !json_is_string(v)) return wrong_type(err, path, "description", "a string", v);
    defaults = json_object_get(root, "defaults");
    if (defaults && !json_is_object(defaults))
        return wrong_type(err, path, "defaults",
                          "an object {warmup, repeats, processes, device, precision, gpus}",
                          defaults);
    if ((rc = check_level_keys(defaults, L_DEFAULTS, path, "defaults", err))) return rc;
    rpx_runner_config_init(d); /* absent: the run options' defaults (options.c) */
    d->spelling = RPX_SPELL_MANIFEST; /* the runner's own messages name keys */
    return read_level(m, defaults, L_DEFAULTS, d, path, "defaults", err);
}

/* tasks: names, inputs, unit (a run option), meta */
static int parse_tasks(rpx_manifest *m, const char *path, rpx_error *err)
{
    json_t *tasks = json_object_get(m->root, "tasks"), *v, *meta, *mv;
    const char *key, *mk;
    int rc = 0;
    if (tasks && !json_is_null(tasks) && !json_is_object(tasks))
        return wrong_type(err, path, "tasks",
                          "an object {\"NAME\": {\"inputs\": \"FILE.npz\", \"unit\": \"frame\"}}",
                          tasks);
    if (!json_is_object(tasks) || json_object_size(tasks) == 0)
        return bad(err, path, "tasks", "missing or empty; give {\"NAME\": {\"inputs\": \"FILE.npz\", \"unit\": \"frame\"}}");
    json_object_foreach(tasks, key, v) {
        char where[300], f[640];
        rpx_runner_config scratch;
        snprintf(where, sizeof where, "tasks.%s", key);
        if (!valid_name(key)) return bad(err, path, where, "a task name must be a non-empty file name (no '/')");
        if (!json_is_object(v)) return wrong_type(err, path, where, "an object {inputs, unit, meta}", v);
        if ((rc = check_level_keys(v, L_TASK, path, where, err))) return rc;
        check_inputs(v, path, where, err, &rc);
        if (rc) return rc;
        rpx_runner_config_init(&scratch);
        if ((rc = read_level(m, v, L_TASK, &scratch, path, where, err))) return rc;
        meta = json_object_get(v, "meta");
        snprintf(f, sizeof f, "%s.meta", where);
        if (meta && !json_is_object(meta))
            return wrong_type(err, path, f, "an object of scalars {\"clip_length\": 250}", meta);
        json_object_foreach(meta, mk, mv) {
            if (json_is_string(mv) || json_is_number(mv) || json_is_boolean(mv)) continue;
            snprintf(f, sizeof f, "%s.meta.%s", where, mk);
            return wrong_type(err, path, f, "a string, a number or a boolean", mv);
        }
    }
    return 0;
}

/* models[mi]: name, model, tasks, and its run options over the defaults (*c) */
static int parse_model(rpx_manifest *m, const char *path, size_t mi, rpx_runner_config *c,
                       rpx_error *err)
{
    json_t *models = json_object_get(m->root, "models"), *tasks = json_object_get(m->root, "tasks");
    json_t *mo = json_array_get(models, mi), *mt;
    char where[64], f[300];
    const char *name;
    size_t k;
    int rc = 0;
    snprintf(where, sizeof where, "models[%zu]", mi);
    if (!json_is_object(mo)) return wrong_type(err, path, where, "an object {name, model, tasks}", mo);
    if ((rc = check_level_keys(mo, L_MODEL, path, where, err))) return rc;
    name = get_str(mo, "name", 1, path, where, err, &rc);
    get_str(mo, "model", 1, path, where, err, &rc);
    if (rc) return rc;
    if (!valid_name(name)) {
        snprintf(f, sizeof f, "%s.name", where);
        return bad(err, path, f, "a model name must be a file name (no '/')");
    }
    if ((rc = read_level(m, mo, L_MODEL, c, path, where, err))) return rc;
    if (json_is_string(json_object_get(mo, "cost")) &&
        !(c->cost = own(m, resolve(path, c->cost))))
        return RPX_ENOMEM;
    for (k = 0; k < mi; k++) {
        json_t *o = json_object_get(json_array_get(models, k), "name");
        if (strcmp(json_string_value(o), name) == 0) {
            snprintf(f, sizeof f, "%s.name", where);
            return rpx_error_set(err, RPX_EFORMAT, "%s: %s: '%s' is also the name of models[%zu]; give each model a unique name",
                                 path, f, name, k);
        }
    }
    mt = json_object_get(mo, "tasks");
    snprintf(f, sizeof f, "%s.tasks", where);
    if (mt && !json_is_null(mt) && !json_is_array(mt))
        return wrong_type(err, path, f, "an array of task names", mt);
    if (!json_is_array(mt) || json_array_size(mt) == 0)
        return bad(err, path, f, "missing or empty; list the task names this model runs");
    for (k = 0; k < json_array_size(mt); k++) {
        json_t *tn = json_array_get(mt, k);
        snprintf(f, sizeof f, "%s.tasks[%zu]", where, k);
        if (!json_is_string(tn)) return wrong_type(err, path, f, "a task name (a string)", tn);
        if (!json_object_get(tasks, json_string_value(tn))) {
            char fix[512];
            snprintf(fix, sizeof fix, "'%.300s' is not a task of \"tasks\"; use one of its keys",
                     json_string_value(tn));
            return bad(err, path, f, fix);
        }
    }
    return 0;
}

/* What the job's report records, beside its run (rpx_batch_job's fields). */
static int job_fields(rpx_manifest *m, rpx_batch_job *j)
{
    const rpx_runner_config *c = &j->run;
    char buf[64];
    j->unit = c->unit;
    j->device = c->device;
    j->precision = c->precision;
    j->cost = c->cost;
    j->gpus = c->gpus;
    if (c->flops == c->flops) {
        snprintf(buf, sizeof buf, "%.17g", c->flops);
        if (!(j->flops = own(m, strdup(buf)))) return RPX_ENOMEM;
    }
    if (c->params == c->params) {
        snprintf(buf, sizeof buf, "%.17g", c->params);
        if (!(j->params = own(m, strdup(buf)))) return RPX_ENOMEM;
    }
    j->warmup = c->warmup;
    j->repeats = c->repeats;
    j->processes = c->processes;
    j->gpu_time = c->gpu_time;
    j->cpus = c->cpus;
    j->spread = c->spread;
    j->audit = c->audit;
    j->audit_threshold = c->audit_threshold;
    j->call_records = c->call_records;
    j->check_outputs = c->check_outputs;
    j->check_fraction = c->check_fraction;
    j->rtol = c->rtol;
    j->atol = c->atol;
    j->output_field = c->target.output_field;
    j->save_outputs = c->save_outputs;
    j->reference_outputs = c->reference_outputs;
    return 0;
}

/* The job of task `key` (its object tv) x models[mi] (its run options in mc):
 * paths resolved, folders per job, every rule combining options checked. */
static int make_job(rpx_manifest *m, const char *path, const char *key, const json_t *tv,
                    size_t mi, const rpx_runner_config *mc, rpx_error *err)
{
    json_t *mo = json_array_get(json_object_get(m->root, "models"), mi);
    json_t *in = json_object_get(tv, "inputs");
    size_t n = json_is_array(in) ? json_array_size(in) : 1, k;
    const char **list = (const char **)(void *)own(m, malloc(n * sizeof *list));
    rpx_batch_job j;
    rpx_error cerr = {0};
    char mw[64], where[300];
    int rc;
    if (!list) return RPX_ENOMEM;
    memset(&j, 0, sizeof j);
    snprintf(mw, sizeof mw, "models[%zu]", mi);
    snprintf(where, sizeof where, "tasks.%s", key);
    j.run = *mc;
    if ((rc = read_level(m, tv, L_TASK, &j.run, path, where, err))) return rc;
    j.task = key;
    j.model_name = json_string_value(json_object_get(mo, "name"));
    j.model = own(m, resolve_model(path, json_string_value(json_object_get(mo, "model"))));
    for (k = 0; k < n; k++) {
        json_t *e = json_is_array(in) ? json_array_get(in, k) : in;
        if (!(list[k] = own(m, resolve(path, json_string_value(e))))) return RPX_ENOMEM;
    }
    j.inputs_list = list;
    j.n_inputs = n;
    j.inputs = list[0];
    j.meta = json_object_get(tv, "meta");
    if (!j.model) return RPX_ENOMEM;
    if ((mc->save_outputs &&
         !(j.run.save_outputs = job_folder(m, path, mc->save_outputs, key, j.model_name))) ||
        (mc->reference_outputs &&
         !(j.run.reference_outputs = job_folder(m, path, mc->reference_outputs, key,
                                                j.model_name))))
        return RPX_ENOMEM;
    if ((rc = job_fields(m, &j))) return rc;
    rpx_batch_job_config(&j, &j.run);
    /* the combinations `rpxprof run` refuses, named as keys */
    if (rpx_runner_config_check(&j.run, RPX_SPELL_MANIFEST, &cerr) != 0)
        return rpx_error_set(err, RPX_EFORMAT, "%s: %s (task '%s'): %s", path, mw, key,
                             cerr.message);
    return add_job(m, &j);
}

static int parse(rpx_manifest *m, const char *path, rpx_error *err)
{
    json_t *models, *tasks, *v;
    rpx_runner_config d, *mc;
    const char *key;
    size_t mi, nm;
    int rc;
    if ((rc = parse_top(m, path, &d, err)) || (rc = parse_tasks(m, path, err))) return rc;
    tasks = json_object_get(m->root, "tasks");
    models = json_object_get(m->root, "models");
    if (models && !json_is_null(models) && !json_is_array(models))
        return wrong_type(err, path, "models", "an array [{\"name\", \"model\", \"tasks\"}]",
                          models);
    if (!json_is_array(models) || json_array_size(models) == 0)
        return bad(err, path, "models", "missing or empty; give [{\"name\", \"model\", \"tasks\"}]");
    nm = json_array_size(models);
    if (!(mc = malloc(nm * sizeof *mc))) return RPX_ENOMEM;
    for (mi = 0, rc = 0; mi < nm && !rc; mi++) {
        mc[mi] = d;
        rc = parse_model(m, path, mi, &mc[mi], err);
    }
    /* The jobs: tasks in manifest order x models in manifest order. */
    json_object_foreach(tasks, key, v) {
        for (mi = 0; mi < nm && !rc; mi++) {
            json_t *mt = json_object_get(json_array_get(models, mi), "tasks");
            size_t k;
            for (k = 0; k < json_array_size(mt); k++)
                if (strcmp(json_string_value(json_array_get(mt, k)), key) == 0) break;
            if (k < json_array_size(mt)) rc = make_job(m, path, key, v, mi, &mc[mi], err);
        }
    }
    free(mc);
    return rc;
}

int rpx_manifest_load(const char *path, rpx_manifest **out, rpx_error *err)
{
    rpx_manifest *m;
    int rc;
    *out = NULL;
    m = calloc(1, sizeof *m);
    if (!m) return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory", path);
    rc = rpx_json_load_user_file(path, JSON_REJECT_DUPLICATES, "a batch manifest", &m->root,
                                 err);
    if (rc) {
        free(m);
        return rc;
    }
    rc = parse(m, path, err);
    if (rc) {
        if (rc == RPX_ENOMEM) rpx_error_set(err, rc, "%s: out of memory", path);
        rpx_manifest_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

void rpx_manifest_free(rpx_manifest *m)
{
    size_t i;
    if (!m) return;
    for (i = 0; i < m->nowned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->jobs);
    json_decref(m->root);
    free(m);
}

size_t rpx_manifest_job_count(const rpx_manifest *m) { return m ? m->njobs : 0; }

const rpx_batch_job *rpx_manifest_job(const rpx_manifest *m, size_t i)
{
    return m && i < m->njobs ? &m->jobs[i] : NULL;
}

char *rpx_batch_dir_clean(const char *dir)
{
    return strndup(dir, dir_len(dir));
}

char *rpx_batch_report_path(const char *out_dir, const rpx_batch_job *job)
{
    size_t dl = dir_len(out_dir);
    size_t len = dl + strlen(job->task) + strlen(job->model_name) + 8;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%.*s%s%s/%s.json", (int)dl, out_dir,
                 dl && out_dir[dl - 1] == '/' ? "" : "/", job->task, job->model_name);
    return p;
}

void rpx_batch_job_config(const rpx_batch_job *j, rpx_runner_config *c)
{
    if (c != &j->run) *c = j->run; /* the run options, read through the options' table */
    c->model = j->model;
    c->inputs = j->inputs;
    c->sample_files = NULL;
    c->n_sample_files = 0;
    if (j->n_inputs > 1) { /* distinct samples (the first is c->inputs) */
        c->sample_files = j->inputs_list;
        c->n_sample_files = j->n_inputs;
    }
    c->meta = (json_t *)j->meta;
}

/* The worker processes the runner will use for a job: the runner's own rule. */
static long job_processes(const rpx_batch_job *j)
{
    rpx_runner_config c;
    rpx_batch_job_config(j, &c);
    return rpx_runner_processes(&c, NULL);
}

/* Two cpus lists that name the same CPUs ("0,1" and "0-1"); NULL: inherited */
static int same_cpus(const char *a, const char *b)
{
    int ca[1024], cb[1024], na, nb;
    if (!a || !b) return !a && !b;
    na = rpx_runner_cpus_list(a, ca, 1024, NULL);
    nb = rpx_runner_cpus_list(b, cb, 1024, NULL);
    if (na < 0 || nb < 0) return strcmp(a, b) == 0;
    return na == nb && memcmp(ca, cb, (size_t)na * sizeof *ca) == 0;
}

int rpx_manifest_check_same_work(const rpx_manifest *m, const char *path, rpx_error *err)
{
    size_t a, b;
    for (a = 0; m && a < m->njobs; a++) {
        const rpx_batch_job *x = &m->jobs[a];
        for (b = a + 1; b < m->njobs; b++) {
            const rpx_batch_job *y = &m->jobs[b];
            const char *key = NULL;
            long vx = 0, vy = 0;
            if (strcmp(x->task, y->task) != 0) continue;
            if (x->warmup != y->warmup) key = "warmup", vx = x->warmup, vy = y->warmup;
            else if (x->repeats != y->repeats) key = "repeats", vx = x->repeats, vy = y->repeats;
            else if ((vx = job_processes(x)) != (vy = job_processes(y))) key = "processes";
            if (!key && (x->spread != y->spread || !same_cpus(x->cpus, y->cpus)))
                return rpx_error_set(
                    err, RPX_EINVAL,
                    "%s: task '%s': the placement is cpus %s%s for model '%s' but cpus %s%s for "
                    "model '%s'; aggregate's same-work check compares the models of a task on "
                    "the same placement policy, so it would FAIL: give both the same cpus and "
                    "spread (in \"defaults\" or on each model), or put one in a task of its own "
                    "(docs/batch.md#same-work)",
                    path, x->task, x->cpus ? x->cpus : "(inherited)", x->spread ? " spread" : "",
                    x->model_name, y->cpus ? y->cpus : "(inherited)", y->spread ? " spread" : "",
                    y->model_name);
            if (!key) continue;
            return rpx_error_set(
                err, RPX_EINVAL,
                "%s: task '%s': %s is %ld for model '%s' but %ld for model '%s'; aggregate's "
                "same-work check compares the models of a task on the same %s, so it would FAIL: "
                "give both the same %s (in \"defaults\" or on each model), or put one in a task "
                "of its own (docs/batch.md#same-work)",
                path, x->task, key, vx, x->model_name, vy, y->model_name,
                strcmp(key, "processes") == 0 ? "number of worker processes"
                : strcmp(key, "warmup") == 0  ? "warmup calls"
                                              : "measured calls",
                key);
        }
    }
    return 0;
}

/* A Slurm variable's value: 1 set and a non-negative integer, 0 unset, -1 bad. */
static int slurm_long(const char *s, long *out)
{
    char *end;
    long v;
    if (!s || !*s) return 0;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 1;
}

int rpx_batch_slurm_shard(const rpx_slurm_array *a, long *i, long *n, rpx_error *err)
{
    const char *vals[5] = {a->task_id, a->task_min, a->task_max, a->task_step, a->task_count};
    static const char *const names[5] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
                                         "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
                                         "SLURM_ARRAY_TASK_COUNT"};
    long v[5] = {0, 0, 0, 0, 0};
    int set[5], k;
    char shown[512];
    size_t off = 0;
    const char *why = NULL;
    for (k = 0; k < 5; k++) {
        off += (size_t)snprintf(shown + off, sizeof shown - off, "%s%s=%.40s", k ? " " : "",
                                names[k], vals[k] && *vals[k] ? vals[k] : "(unset)");
        if (off >= sizeof shown) off = sizeof shown - 1;
        set[k] = slurm_long(vals[k], &v[k]);
        if (set[k] < 0 && !why) why = "a value is not a non-negative integer";
    }
    if (!why && !set[0] && !set[4]) return 0; /* not an array task */
    if (!why && (!set[0] || !set[4])) why = "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT come together";
    if (!why && v[4] < 1) why = "SLURM_ARRAY_TASK_COUNT must be at least 1";
    if (!why && v[4] == 1) {
        if ((set[1] && v[1] != v[0]) || (set[2] && v[2] != v[0]))
            why = "one task, but its index is not SLURM_ARRAY_TASK_MIN and _MAX";
        else {
            *i = 0;
            *n = 1;
            return 1;
        }
    }
    if (!why && (!set[1] || !set[2]))
        why = "an array of several tasks needs SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX";
    if (!why && !set[3]) { /* no step: only a set that no step can hide */
        if (v[4] == 2 && v[2] > v[1]) v[3] = v[2] - v[1];
        else if (v[2] - v[1] == v[4] - 1) v[3] = 1;
        else why = "no SLURM_ARRAY_TASK_STEP, and MIN..MAX holds more indices than COUNT: the "
                   "array is a list (like 1,3,4), not MIN, MIN+STEP, ..., MAX";
    }
    if (!why && v[3] < 1) why = "SLURM_ARRAY_TASK_STEP must be at least 1";
    if (!why && (v[2] < v[1] || (v[2] - v[1]) / v[3] != v[4] - 1 || (v[2] - v[1]) % v[3] != 0))
        why = "the array's indices are not MIN, MIN+STEP, ..., MAX, COUNT of them (a list like "
              "1,3,4, or a step that does not fit)";
    if (!why && (v[0] < v[1] || v[0] > v[2] || (v[0] - v[1]) % v[3] != 0))
        why = "SLURM_ARRAY_TASK_ID is not one of MIN, MIN+STEP, ..., MAX";
    if (why)
        return rpx_error_set(err, RPX_EINVAL,
                             "%s: %s, so the array's tasks cannot be numbered as shards that run "
                             "every job exactly once; submit the whole array again (--array=0-N "
                             "or MIN-MAX:STEP, every index) with --resume, or pass --shard I/N "
                             "to each task",
                             shown, why);
    *i = (v[0] - v[1]) / v[3];
    *n = v[4];
    return 1;
}

static int str_is(const json_t *o, const char *key, const char *want)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

/* The report ran with the job's placement (a report without `placement`, from
 * before issue 27, inherited its mask). */
static int placement_matches(const json_t *r, const rpx_batch_job *job)
{
    const json_t *pl = json_object_get(r, "placement");
    const char *policy = json_string_value(json_object_get(pl, "policy"));
    const char *want = job->spread ? "spread" : job->cpus ? "pinned" : "inherit";
    rpx_runner_config c;
    if (!json_is_object(pl)) return strcmp(want, "inherit") == 0;
    if (!policy || strcmp(policy, want) != 0) return 0;
    if (!job->cpus) return json_is_null(json_object_get(pl, "cpus_requested"));
    {   /* the same CPUs, whichever way the list was written */
        int cpus[1024], n;
        json_t *req = json_object_get(pl, "cpus_requested");
        size_t i;
        rpx_batch_job_config(job, &c);
        n = rpx_runner_cpus_list(c.cpus, cpus, 1024, NULL);
        if (n < 0 || !json_is_array(req) || json_array_size(req) != (size_t)n) return 0;
        for (i = 0; i < (size_t)n; i++)
            if (json_integer_value(json_array_get(req, i)) != cpus[i]) return 0;
        return 1;
    }
}

int rpx_batch_report_matches(const char *report_path, const rpx_batch_job *job)
{
    json_t *r, *meta, *empty;
    char hex[65];
    int ok = 0;
    if (rpx__user_file_regular(report_path, NULL, NULL) != 0) return 0; /* a FIFO would block */
    r = json_load_file(report_path, 0, NULL);
    if (!r) return 0;
    meta = json_object_get(r, "metadata");
    empty = json_object();
    char *shown = rpx_target_redact_spec(job->model); /* as the report shows it */
    if (shown && str_is(r, "status", "complete") && str_is(r, "model_callable", shown) &&
        str_is(r, "device", job->device) && str_is(r, "precision", job->precision) &&
        str_is(r, "unit", job->unit) && str_is(r, "task", job->task) &&
        str_is(r, "model_name", job->model_name) &&
        json_integer_value(json_object_get(r, "warmup_calls")) == job->warmup &&
        json_integer_value(json_object_get(r, "measured_calls")) == job->repeats &&
        (job->processes == 0 ||
         json_integer_value(json_object_get(r, "processes")) == job->processes) &&
        json_is_object(json_object_get(r, "gpu_time")) == !!job->gpu_time &&
        placement_matches(r, job) &&
        json_is_integer(json_object_get(r, "warmup_calls")) && meta &&
        json_equal(meta, job->meta ? (json_t *)job->meta : empty) &&
        rpx_runner_inputs_sha256(job->inputs_list ? job->inputs_list : &job->inputs,
                                 job->inputs_list ? job->n_inputs : 1, hex, NULL) == 0 &&
        str_is(r, "inputs_sha256", hex))
        ok = 1;
    free(shown);
    json_decref(empty);
    json_decref(r);
    return ok;
}
