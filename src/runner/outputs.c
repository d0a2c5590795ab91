/* outputs.c — owns output checks (outputs.h, docs/output-checks.md): the
 * reference pass, the seeded choice of checked calls, the comparison
 * (bit-exact, or numpy's allclose rule with --rtol/--atol), the reference's
 * NPZ files (--save-outputs, --reference-outputs) and the report's section.
 * Everything here runs outside the timed span. */
#include "common/output.h"
#include "runner/outputs.h"
#include "loader/kinds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "rpxprof/error.h"
#include "rpxprof/npz.h"

/* One sample's reference: its own copy of every output. */
typedef struct reference {
    size_t count;
    rpx_tensor *tensors;          /* names and data malloc'ed */
    char sha256[65];
} reference;

struct outputs_check {
    outputs_params op;
    rpx_target *target;
    size_t n;                     /* distinct samples */
    reference *refs;
    long repeats;
    uint64_t rng;
    long checked, mismatched, unreadable;
    double max_abs_diff;          /* NaN: none measured */
    int max_abs_diff_set;
    json_t *shown;                /* the first mismatches */
    char first_error[256];        /* the first output that could not be read */
};

/* ---- helpers ---- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0) v = ldexp((double)m, -24);
    else if (e == 31) v = m ? (double)NAN : (double)INFINITY;
    else v = ldexp((double)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Element j of a tensor's data as a double. */
static double element(const rpx_tensor *t, size_t j)
{
    const void *d = t->data;
    switch (t->dtype) {
    case RPX_DTYPE_BOOL: return ((const uint8_t *)d)[j] != 0;
    case RPX_DTYPE_INT8: return ((const int8_t *)d)[j];
    case RPX_DTYPE_INT16: return ((const int16_t *)d)[j];
    case RPX_DTYPE_INT32: return ((const int32_t *)d)[j];
    case RPX_DTYPE_INT64: return (double)((const int64_t *)d)[j];
    case RPX_DTYPE_UINT8: return ((const uint8_t *)d)[j];
    case RPX_DTYPE_UINT16: return ((const uint16_t *)d)[j];
    case RPX_DTYPE_UINT32: return ((const uint32_t *)d)[j];
    case RPX_DTYPE_UINT64: return (double)((const uint64_t *)d)[j];
    case RPX_DTYPE_FLOAT16: return half_to_double(((const uint16_t *)d)[j]);
    case RPX_DTYPE_FLOAT32: return ((const float *)d)[j];
    case RPX_DTYPE_FLOAT64: return ((const double *)d)[j];
    }
    return (double)NAN;
}

static void shape_text(const rpx_tensor *t, char *buf, size_t size)
{
    int d, n = 0;
    buf[0] = '\0';
    if (t->ndim == 0) snprintf(buf, size, "()");
    for (d = 0; d < t->ndim && n >= 0 && (size_t)n < size; d++)
        n += snprintf(buf + n, size - (size_t)n, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
}

static void hex_of(const uint8_t *md, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    int i;
    for (i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
}

/* SHA-256 over every output's name, dtype, shape and bytes, in order. */
static void outputs_sha256(const rpx_tensor *ts, size_t count, char hex[65])
{
    struct sha256_ctx ctx;
    uint8_t md[SHA256_DIGEST_SIZE];
    size_t i;
    sha256_init(&ctx);
    for (i = 0; i < count; i++) {
        const rpx_tensor *t = &ts[i];
        int32_t head[2] = {(int32_t)t->dtype, (int32_t)t->ndim};
        const char *name = t->name ? t->name : "";
        sha256_update(&ctx, strlen(name) + 1, (const uint8_t *)name);
        sha256_update(&ctx, sizeof head, (const uint8_t *)head);
        if (t->ndim > 0)
            sha256_update(&ctx, (size_t)t->ndim * sizeof t->shape[0], (const uint8_t *)t->shape);
        if (t->nbytes && t->data) sha256_update(&ctx, t->nbytes, (const uint8_t *)t->data);
    }
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, md);
    hex_of(md, hex);
}

static void reference_clear(reference *r)
{
    size_t i;
    for (i = 0; i < r->count; i++) {
        free((char *)r->tensors[i].name);
        free((void *)r->tensors[i].data);
    }
    free(r->tensors);
    memset(r, 0, sizeof *r);
}

/* Every output has a name, and no two the same: the check compares them by
 * position but names them, and --save-outputs writes them as NPZ members by
 * name. Refused here, at the reference, naming the outputs. */
static int names_check(const rpx_outputs *o, const char *what, rpx_error *err)
{
    size_t i, j;
    for (i = 0; i < o->count; i++) {
        const char *a = o->tensors[i].name;
        if (!a || !*a)
            return rpx_error_set(err, RPX_EMODEL,
                                 "%s: output %zu has no name; give every output a name of its "
                                 "own (the check names them, --save-outputs writes them by name)",
                                 what, i);
        for (j = 0; j < i; j++)
            if (o->tensors[j].name && strcmp(o->tensors[j].name, a) == 0)
                return rpx_error_set(err, RPX_EMODEL,
                                     "%s: outputs %zu and %zu are both named '%s'; give every "
                                     "output a name of its own (the check names them, "
                                     "--save-outputs writes them by name)",
                                     what, j, i, a);
    }
    return 0;
}

/* Whether the shape's dimensions (none negative) multiply to the tensor's
 * count, without overflow: a shape that says more than the bytes hold would
 * be read past their end by the NPZ writer. */
static int shape_holds(const rpx_tensor *t)
{
    size_t n = 1;
    int d;
    for (d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0) return 0;
        if (t->shape[d] > 0 && n > SIZE_MAX / (size_t)t->shape[d]) return 0;
        n *= (size_t)t->shape[d];
    }
    return n == t->count;
}

/* A checked copy of what the model handed back. */
static int reference_copy(reference *r, const rpx_outputs *o, const char *what, rpx_error *err)
{
    size_t i;
    int rc;
    memset(r, 0, sizeof *r);
    if (o->count && !o->tensors)
        return rpx_error_set(err, RPX_EMODEL, "%s: %zu outputs but no tensors", what, o->count);
    if ((rc = names_check(o, what, err)) != 0) return rc;
    r->tensors = calloc(o->count ? o->count : 1, sizeof *r->tensors);
    if (!r->tensors) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    r->count = o->count;
    for (i = 0; i < o->count; i++) {
        const rpx_tensor *s = &o->tensors[i];
        rpx_tensor *d = &r->tensors[i];
        size_t es = rpx_dtype_size(s->dtype);
        if (!es || s->ndim < 0 || s->ndim > RPX_MAX_DIMS || s->nbytes != s->count * es ||
            (s->nbytes && !s->data) || !shape_holds(s))
            return rpx_error_set(err, RPX_EMODEL,
                                 "%s: output %zu ('%.100s') is malformed (dtype %d, ndim %d, "
                                 "count %zu, nbytes %zu%s); fill every rpx_tensor field, count "
                                 "the product of the shape",
                                 what, i, s->name ? s->name : "", (int)s->dtype, s->ndim, s->count,
                                 s->nbytes,
                                 s->ndim >= 0 && s->ndim <= RPX_MAX_DIMS && !shape_holds(s)
                                     ? ", a shape of another count" : "");
        *d = *s;
        d->name = strdup(s->name ? s->name : "");
        d->data = malloc(s->nbytes ? s->nbytes : 1);
        if (!d->name || !d->data) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
        if (s->nbytes) memcpy((void *)d->data, s->data, s->nbytes);
    }
    outputs_sha256(r->tensors, r->count, r->sha256);
    return 0;
}

static void sample_file(const char *dir, size_t k, char *buf, size_t size)
{
    snprintf(buf, size, "%s/outputs-%05zu.npz", dir, k);
}

static void absolute(const char *dir, char *out, size_t size)
{
    char cwd[4096];
    out[0] = '\0';
    if (!dir || !*dir) return;
    if (dir[0] == '/' || !getcwd(cwd, sizeof cwd) ||
        snprintf(out, size, "%s/%s", cwd, dir) >= (int)size)
        snprintf(out, size, "%s", dir);
}

void rpx__outputs_resolve(outputs_params *op)
{
    absolute(op->reference_dir, op->reference_abs, sizeof op->reference_abs);
    absolute(op->save_dir, op->save_abs, sizeof op->save_abs);
}

/* Where a folder's files are: its absolute path once resolved. */
static const char *place_of(const char *abs, const char *dir)
{
    return abs && abs[0] ? abs : dir;
}

/* ---- the parent ---- */

int rpx__outputs_place(const char *save_dir, rpx_error *err)
{
    char probe[4200];
    struct stat st;
    int fd;
    if (mkdir(save_dir, 0777) != 0 && errno != EEXIST)
        return rpx_error_set(err, RPX_EIO, "--save-outputs %s: cannot create the folder (%s); "
                             "give a folder you can write", save_dir, strerror(errno));
    if (stat(save_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return rpx_error_set(err, RPX_EUSAGE, "--save-outputs %s: not a folder; give a folder",
                             save_dir);
    /* a file made and removed now: an unwritable folder is refused before the
     * model is loaded, not after the whole run */
    snprintf(probe, sizeof probe, "%s/.rpxprof-write-check.XXXXXX", save_dir);
    if ((fd = mkostemp(probe, O_CLOEXEC)) < 0)
        return rpx_error_set(err, RPX_EIO, "--save-outputs %s: cannot write in the folder (%s); "
                             "give a folder you can write (or fix its permissions)",
                             save_dir, strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

int rpx__outputs_prepare(const outputs_params *op, size_t n_samples, int force,
                         const char *const *reads, size_t n_reads, rpx_error *err)
{
    char path[4200];
    struct stat st;
    size_t k, i;
    int rc;
    if (op->reference_dir) {
        for (k = 0; k < n_samples; k++) {
            sample_file(op->reference_dir, k, path, sizeof path);
            if (stat(path, &st) != 0)
                return rpx_error_set(err, RPX_EUSAGE,
                                     "--reference-outputs %s: %s is missing (%s); the run has %zu "
                                     "distinct samples: give the folder a run with the same "
                                     "inputs wrote with --save-outputs",
                                     op->reference_dir, path, strerror(errno), n_samples);
        }
    }
    if (!op->save_dir) return 0;
    if ((rc = rpx__outputs_place(op->save_dir, err)) != 0) return rc;
    /* what the run reads is never replaced, even with force */
    if (op->reference_dir && rpx_output_same_file(op->save_dir, op->reference_dir))
        return rpx_error_set(err, RPX_EUSAGE,
                             "--save-outputs %s: is the --reference-outputs folder this run reads; "
                             "give another folder", op->save_dir);
    for (k = 0; k < n_samples; k++) {
        sample_file(op->save_dir, k, path, sizeof path);
        for (i = 0; i < n_reads; i++)
            if (reads[i] && rpx_output_same_file(path, reads[i]))
                return rpx_error_set(err, RPX_EUSAGE,
                                     "--save-outputs %s: would replace %s, a file this run reads%s%s%s; "
                                     "rpxprof never replaces it, even with --force; give another "
                                     "folder",
                                     op->save_dir, path, strcmp(path, reads[i]) ? " (" : "",
                                     strcmp(path, reads[i]) ? reads[i] : "",
                                     strcmp(path, reads[i]) ? ")" : "");
    }
    if (!force) {
        DIR *d = opendir(op->save_dir);
        struct dirent *e;
        if (!d)
            return rpx_error_set(err, RPX_EIO, "--save-outputs %s: cannot read the folder (%s)",
                                 op->save_dir, strerror(errno));
        while ((e = readdir(d)) != NULL)
            if (strncmp(e->d_name, "outputs-", 8) == 0 && strstr(e->d_name, ".npz")) {
                rc = rpx_error_set(err, RPX_EUSAGE,
                                   "--save-outputs %s: %s is already there; give an empty "
                                   "folder, or --force to replace the saved outputs",
                                   op->save_dir, e->d_name);
                closedir(d);
                return rc;
            }
        closedir(d);
    }
    return 0;
}

/* ---- the model's process ---- */

static int load_reference(const outputs_check *oc, size_t k, reference *r, rpx_error *err)
{
    char path[4200], what[4300];
    rpx_npz *npz = NULL;
    const rpx_inputs *in;
    rpx_outputs o;
    int rc;
    sample_file(place_of(oc->op.reference_abs, oc->op.reference_dir), k, path, sizeof path);
    if ((rc = rpx_npz_load(path, &npz, err)) != 0) {
        /* the reader's advice is about inputs: this file is a saved reference */
        char why[sizeof err->message], shown[4200], *cut;
        size_t n = strlen(path);
        sample_file(oc->op.reference_dir, k, shown, sizeof shown); /* as the user gave it */
        if (strncmp(err->message, path, n) == 0)
            snprintf(why, sizeof why, "%.300s%.700s", shown, err->message + n);
        else
            snprintf(why, sizeof why, "%s", err->message);
        if ((cut = strstr(why, "; save the inputs")) != NULL ||
            (cut = strstr(why, ", write it again with numpy")) != NULL ||
            (cut = strstr(why, "; write it again with numpy")) != NULL)
            *cut = '\0';
        return rpx_error_set(err, rc, "--reference-outputs: %s; the saved reference is "
                             "damaged: write it again with a run's --save-outputs %s", why,
                             oc->op.reference_dir);
    }
    in = rpx_npz_inputs(npz);
    o.count = in->count;
    o.tensors = in->tensors;
    snprintf(what, sizeof what, "--reference-outputs %s", path);
    rc = reference_copy(r, &o, what, err);
    rpx_npz_free(npz);
    return rc;
}

static int save_reference(const outputs_check *oc, size_t k, const reference *r, rpx_error *err)
{
    char path[4200];
    rpx_npz_writer *w = NULL;
    size_t i;
    int rc;
    sample_file(place_of(oc->op.save_abs, oc->op.save_dir), k, path, sizeof path);
    if ((rc = rpx_npz_writer_open(path, 0, &w, err)) != 0) return rc;
    for (i = 0; i < r->count; i++) {
        const rpx_tensor *t = &r->tensors[i];
        if ((rc = rpx_npz_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data, err)) !=
            0) {
            rpx_npz_writer_discard(w);
            return rc;
        }
    }
    return rpx_npz_writer_close(w, err);
}

int rpx__outputs_begin(const outputs_params *op, rpx_target *t, const rpx_inputs *samples,
                       size_t n, const rpx_inputs *pristine, long repeats, outputs_check **out,
                       rpx_error *err)
{
    outputs_check *oc;
    rpx_error merr;
    size_t k;
    int rc = 0;
    *out = NULL;
    if (!t->hooks.outputs)
        return rpx_error_set(
            err, RPX_EUSAGE,
            "--check-outputs: --model %s does not show its outputs; %s",
            t->display_spec ? t->display_spec : t->spec,
            t->kind && t->kind->outputs_how ? t->kind->outputs_how
                                            : "this kind of target has no outputs to check");
    if (t->hooks.run)
        return rpx_error_set(err, RPX_EUSAGE,
                             "--check-outputs: an open-loop load (--rate on an HTTP API) has no "
                             "calls of its own to check; drop --rate or --check-outputs");
    oc = calloc(1, sizeof *oc);
    if (!oc) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    oc->op = *op;
    oc->target = t;
    oc->n = n;
    oc->repeats = repeats;
    oc->rng = op->seed ^ (0xD1B54A32D192ED03ULL * (uint64_t)(op->process + 1));
    oc->max_abs_diff = (double)NAN;
    oc->shown = json_array();
    oc->refs = calloc(n ? n : 1, sizeof *oc->refs);
    if (!oc->refs || !oc->shown) {
        rpx__outputs_free(oc);
        return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    }
    if (t->hooks.keep_outputs) t->hooks.keep_outputs(t->hooks.state, 1);
    for (k = 0; k < n && rc == 0; k++) {
        if (op->reference_dir) {
            rc = load_reference(oc, k, &oc->refs[k], err);
        } else {
            rpx_outputs o = {0, NULL};
            char what[128];
            size_t a;
            memset(&merr, 0, sizeof merr);
            if (pristine) /* writable inputs: the sample's own bytes */
                for (a = 0; a < samples[k].count && a < pristine[k].count; a++)
                    if (samples[k].tensors[a].nbytes)
                        memcpy((void *)samples[k].tensors[a].data, pristine[k].tensors[a].data,
                               samples[k].tensors[a].nbytes);
            rc = t->hooks.call(t->hooks.state, &samples[k], &merr);
            merr.message[sizeof merr.message - 1] = '\0'; /* the model may fill it to the end */
            if (rc != 0) {
                rc = rpx_error_set(err, RPX_EMODEL,
                                   "--check-outputs: the reference call on sample %zu failed: %s",
                                   k, merr.message[0] ? merr.message : "no message given");
            } else if ((rc = t->hooks.outputs(t->hooks.state, &o, &merr)) != 0) {
                merr.message[sizeof merr.message - 1] = '\0';
                rc = rpx_error_set(err, RPX_EMODEL,
                                   "--check-outputs: the outputs of the reference call on sample "
                                   "%zu cannot be read: %s",
                                   k, merr.message[0] ? merr.message : "no message given");
            } else {
                snprintf(what, sizeof what, "--check-outputs: reference call on sample %zu", k);
                rc = reference_copy(&oc->refs[k], &o, what, err);
            }
            if (t->hooks.after_call) t->hooks.after_call(t->hooks.state, 0, rc);
            if (rc == 0 && op->save_dir && op->process == 0)
                rc = save_reference(oc, k, &oc->refs[k], err);
        }
    }
    if (rc != 0) {
        rpx__outputs_free(oc);
        return rc;
    }
    *out = oc;
    return 0;
}

static void note_diff(outputs_check *oc, double d)
{
    if (d != d) return;
    if (!oc->max_abs_diff_set || d > oc->max_abs_diff) oc->max_abs_diff = d;
    oc->max_abs_diff_set = 1;
}

static json_t *number_or_null(double v)
{
    return v == v && !isinf(v) ? json_real(v) : json_null();
}

/* Compare one output with its reference: 0 equal, 1 differs (*maxd, *ndiff). */
static int compare_tensor(const outputs_check *oc, const rpx_tensor *a, const rpx_tensor *r,
                          double *maxd, size_t *ndiff)
{
    const int tol = oc->op.rtol > 0 || oc->op.atol > 0;
    size_t j;
    *maxd = 0;
    *ndiff = 0;
    if (!tol && (a->nbytes == 0 || memcmp(a->data, r->data, a->nbytes) == 0)) return 0;
    for (j = 0; j < a->count; j++) {
        double x = element(a, j), y = element(r, j), d = fabs(x - y);
        int same;
        if (x != x || y != y) {
            same = (x != x) && (y != y);
            if (!same) d = (double)INFINITY;
        } else if (tol) {
            same = x == y || d <= oc->op.atol + oc->op.rtol * fabs(y);
        } else {
            same = memcmp((const char *)a->data + j * rpx_dtype_size(a->dtype),
                          (const char *)r->data + j * rpx_dtype_size(r->dtype),
                          rpx_dtype_size(a->dtype)) == 0;
        }
        if (!same) (*ndiff)++;
        if (d == d && d > *maxd) *maxd = d;
    }
    return *ndiff > 0;
}

static void mismatch(outputs_check *oc, long i, size_t k, const char *output, double maxd,
                     long ndiff, const char *why)
{
    oc->mismatched++;
    note_diff(oc, maxd);
    if (json_array_size(oc->shown) < RPX_OUTPUTS_MAX_SHOWN) {
        json_t *m = json_object();
        json_object_set_new(m, "process", json_integer(oc->op.process));
        json_object_set_new(m, "call", json_integer(i));
        json_object_set_new(m, "sample", json_integer((json_int_t)k));
        json_object_set_new(m, "output", output ? json_string(output) : json_null());
        json_object_set_new(m, "max_abs_diff", number_or_null(maxd));
        json_object_set_new(m, "elements_differing", ndiff >= 0 ? json_integer(ndiff) : json_null());
        json_object_set_new(m, "reason", json_string(why));
        json_array_append_new(oc->shown, m);
    }
}

void rpx__outputs_check_call(void *ctx, long i, size_t k, int rc)
{
    outputs_check *oc = ctx;
    const double u = (double)(splitmix64(&oc->rng) >> 11) * 0x1.0p-53;
    rpx_outputs o = {0, NULL};
    rpx_error merr;
    const reference *r;
    size_t t;
    int differs = 0;
    if (rc != 0) return; /* a failed call has no outputs */
    if (!(u < oc->op.fraction) && !(oc->checked == 0 && i == oc->repeats - 1)) return;
    if (k >= oc->n) return;
    r = &oc->refs[k];
    oc->checked++;
    memset(&merr, 0, sizeof merr);
    if (oc->target->hooks.outputs(oc->target->hooks.state, &o, &merr) != 0) {
        merr.message[sizeof merr.message - 1] = '\0'; /* the model may fill it to the end */
        oc->unreadable++;
        if (!oc->first_error[0])
            snprintf(oc->first_error, sizeof oc->first_error, "%.250s",
                     merr.message[0] ? merr.message : "no message given");
        mismatch(oc, i, k, NULL, (double)NAN, -1, "the outputs could not be read");
        return;
    }
    if (o.count != r->count) {
        char why[128];
        snprintf(why, sizeof why, "%zu outputs, the reference has %zu", o.count, r->count);
        mismatch(oc, i, k, NULL, (double)NAN, -1, why);
        return;
    }
    for (t = 0; t < o.count && !differs; t++) {
        const rpx_tensor *a = &o.tensors[t], *b = &r->tensors[t];
        char why[700], sa[200], sb[200];
        double maxd;
        size_t ndiff;
        int d;
        shape_text(a, sa, sizeof sa);
        shape_text(b, sb, sizeof sb);
        if (strcmp(a->name ? a->name : "", b->name) != 0 || a->dtype != b->dtype ||
            strcmp(sa, sb) != 0 || a->nbytes != b->nbytes || (a->nbytes && !a->data)) {
            snprintf(why, sizeof why, "'%.100s' %s %s, the reference '%.100s' %s %s",
                     a->name ? a->name : "", rpx_dtype_name(a->dtype), sa, b->name,
                     rpx_dtype_name(b->dtype), sb);
            mismatch(oc, i, k, b->name, (double)NAN, -1, why);
            return;
        }
        if ((d = compare_tensor(oc, a, b, &maxd, &ndiff)) != 0) {
            snprintf(why, sizeof why, "%zu of %zu elements differ%s", ndiff, a->count,
                     oc->op.rtol > 0 || oc->op.atol > 0 ? " beyond --rtol/--atol" : "");
            mismatch(oc, i, k, b->name, maxd, (long)ndiff, why);
            differs = 1;
        } else {
            note_diff(oc, maxd);
        }
    }
}

json_t *rpx__outputs_json(const outputs_check *oc)
{
    json_t *o = json_object(), *sha = json_array(), *names = json_array();
    size_t k, t;
    char digest[65];
    {
        /* every sample's SHA-256 in one (the processes' passes compare on it), and the
         * list itself for up to RPX_OUTPUTS_MAX_LISTED samples (the shared block is bounded) */
        struct sha256_ctx ctx;
        uint8_t md[SHA256_DIGEST_SIZE];
        sha256_init(&ctx);
        for (k = 0; k < oc->n; k++) sha256_update(&ctx, 64, (const uint8_t *)oc->refs[k].sha256);
        sha256_digest(&ctx, SHA256_DIGEST_SIZE, md);
        hex_of(md, digest);
    }
    if (oc->n <= RPX_OUTPUTS_MAX_LISTED)
        for (k = 0; k < oc->n; k++) json_array_append_new(sha, json_string(oc->refs[k].sha256));
    json_object_set_new(o, "reference_digest", json_string(digest));
    json_object_set_new(o, "reference_samples", json_integer((json_int_t)oc->n));
    if (oc->n)
        for (t = 0; t < oc->refs[0].count; t++) {
            const rpx_tensor *x = &oc->refs[0].tensors[t];
            json_t *s = json_array(), *d = json_object();
            int j;
            for (j = 0; j < x->ndim; j++) json_array_append_new(s, json_integer(x->shape[j]));
            json_object_set_new(d, "name", json_string(x->name));
            json_object_set_new(d, "dtype", json_string(rpx_dtype_name(x->dtype)));
            json_object_set_new(d, "shape", s);
            json_array_append_new(names, d);
        }
    json_object_set_new(o, "checked", json_integer(oc->checked));
    json_object_set_new(o, "mismatched", json_integer(oc->mismatched));
    json_object_set_new(o, "unreadable", json_integer(oc->unreadable));
    json_object_set_new(o, "first_error", oc->first_error[0] ? json_string(oc->first_error)
                                                             : json_null());
    json_object_set_new(o, "max_abs_diff",
                        oc->max_abs_diff_set ? number_or_null(oc->max_abs_diff) : json_null());
    json_object_set_new(o, "shown", json_deep_copy(oc->shown));
    json_object_set_new(o, "reference_sha256", sha);
    json_object_set_new(o, "outputs", names);
    return o;
}

void rpx__outputs_free(outputs_check *oc)
{
    size_t k;
    if (!oc) return;
    if (oc->refs)
        for (k = 0; k < oc->n; k++) reference_clear(&oc->refs[k]);
    free(oc->refs);
    json_decref(oc->shown);
    free(oc);
}

/* ---- the report ---- */

json_t *rpx__outputs_merge(const outputs_params *op, json_t *const *per_process, int n,
                           int *differ)
{
    json_t *o = json_object(), *shown = json_array(), *first_sha = NULL, *outs = NULL,
           *by_proc = json_array(), *ref = json_object(), *first_digest = NULL,
           *first_n = NULL;
    long checked = 0, mismatched = 0, ref_differ = 0;
    double maxd = (double)NAN;
    int i, reported = 0;
    const int tol = op->rtol > 0 || op->atol > 0;
    for (i = 0; i < n; i++) {
        json_t *p = per_process[i], *m;
        size_t j;
        if (!json_is_object(p)) {
            json_array_append_new(by_proc, json_null());
            continue;
        }
        reported++;
        checked += (long)json_integer_value(json_object_get(p, "checked"));
        mismatched += (long)json_integer_value(json_object_get(p, "mismatched"));
        if (json_is_number(json_object_get(p, "max_abs_diff"))) {
            double d = json_number_value(json_object_get(p, "max_abs_diff"));
            if (maxd != maxd || d > maxd) maxd = d;
        }
        json_array_foreach(json_object_get(p, "shown"), j, m)
            if (json_array_size(shown) < RPX_OUTPUTS_MAX_SHOWN) json_array_append(shown, m);
        if (!first_digest) {
            first_sha = json_object_get(p, "reference_sha256");
            first_digest = json_object_get(p, "reference_digest");
            first_n = json_object_get(p, "reference_samples");
            outs = json_object_get(p, "outputs");
        } else if (!op->reference_dir &&
                   !json_equal(first_digest, json_object_get(p, "reference_digest"))) {
            ref_differ++; /* this process's reference pass returned other outputs */
        }
        {
            json_t *b = json_object();
            json_object_set_new(b, "checked", json_incref(json_object_get(p, "checked")));
            json_object_set_new(b, "mismatched", json_incref(json_object_get(p, "mismatched")));
            json_object_set_new(b, "reference_matches_first",
                                json_boolean(json_equal(first_digest,
                                                        json_object_get(p, "reference_digest"))));
            json_array_append_new(by_proc, b);
        }
    }
    *differ = mismatched > 0 || ref_differ > 0;
    /* a model that handed back no output at all: nothing was compared */
    json_object_set_new(o, "verdict", json_string(reported == 0 || json_array_size(outs) == 0
                                                      ? "not_checked"
                                                  : *differ ? "differ" : "match"));
    json_object_set_new(o, "checked_calls", json_integer(checked));
    json_object_set_new(o, "mismatched_calls", json_integer(mismatched));
    json_object_set_new(o, "processes_with_other_reference", json_integer(ref_differ));
    json_object_set_new(o, "fraction", json_real(op->fraction));
    json_object_set_new(o, "seed", json_integer((json_int_t)op->seed));
    json_object_set_new(o, "comparison", json_string(tol ? "tolerance" : "bit_exact"));
    json_object_set_new(o, "rtol", tol ? json_real(op->rtol) : json_null());
    json_object_set_new(o, "atol", tol ? json_real(op->atol) : json_null());
    json_object_set_new(o, "max_abs_diff", number_or_null(maxd));
    json_object_set_new(o, "mismatches", shown);
    json_object_set_new(ref, "source", json_string(op->reference_dir ? "saved" : "reference_pass"));
    json_object_set_new(ref, "path", op->reference_dir ? json_string(op->reference_dir)
                                                       : json_null());
    json_object_set_new(ref, "saved_to", op->save_dir ? json_string(op->save_dir) : json_null());
    json_object_set_new(ref, "samples", first_n ? json_incref(first_n) : json_null());
    json_object_set_new(ref, "sha256", first_sha ? json_deep_copy(first_sha) : json_array());
    json_object_set_new(ref, "digest", first_digest ? json_incref(first_digest) : json_null());
    json_object_set_new(o, "reference", ref);
    json_object_set_new(o, "outputs", outs ? json_deep_copy(outs) : json_array());
    json_object_set_new(o, "by_process", by_proc);
    return o;
}
