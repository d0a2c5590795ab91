/* block.c — owns the session block of a run report (docs/report.md#session):
 * its id and times, the benchmark's identity, the fingerprint of what makes
 * two sessions comparable, their digests, and the block derived for a report
 * written before sessions existed (rpx_session_of_report). Everything is read
 * from the report itself (its system card, its target section, its config
 * fields), so that a derived block and a written one agree on the same run.
 * The version under test is version.c's; comparability is comparable.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <nettle/sha2.h>

#include "rpxprof/error.h"
#include "rpxprof/session.h"
#include "session/session_internal.h"

static void stamp(char *out, size_t size, const struct timespec *ts, int compact)
{
    struct tm tm;
    char base[32];
    gmtime_r(&ts->tv_sec, &tm);
    if (compact) {
        strftime(out, size, "%Y%m%dT%H%M%SZ", &tm);
        return;
    }
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, size, "%.19s.%03dZ", base, (int)(ts->tv_nsec / 1000000L) % 1000);
}

void rpx__session_now(char *out)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    stamp(out, 32, &ts, 0);
}

void rpx__session_new(char *id, char *started)
{
    struct timespec ts;
    unsigned char r[4] = {0};
    char day[24];
    clock_gettime(CLOCK_REALTIME, &ts);
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) { /* no entropy: the clock's bits */
        unsigned long x = (unsigned long)ts.tv_nsec ^ ((unsigned long)ts.tv_sec << 7);
        memcpy(r, &x, sizeof r);
    }
    stamp(day, sizeof day, &ts, 1);
    snprintf(id, 32, "%.16s-%02x%02x%02x%02x", day, r[0], r[1], r[2], r[3]);
    stamp(started, 32, &ts, 0);
}

static void to_hex(const unsigned char *md, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[2 * n] = '\0';
}

int rpx__session_digest(const json_t *v, char hex[17])
{
    struct sha256_ctx ctx;
    unsigned char md[SHA256_DIGEST_SIZE];
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!s) return -1;
    sha256_init(&ctx);
    sha256_update(&ctx, strlen(s), (const unsigned char *)s);
    sha256_digest(&ctx, sizeof md, md);
    free(s);
    to_hex(md, 8, hex);
    return 0;
}

/* ------------------------------------------------------------ reading */

/* the value at a dotted path ("cpu.model_name") under o, or NULL */
static const json_t *at(const json_t *o, const char *path)
{
    char key[64];
    while (o && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key) return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        o = json_object_get(o, key);
        path += n + (path[n] == '.');
    }
    return o;
}

/* a copy of a string, number or boolean there, else null */
static json_t *scalar(const json_t *o, const char *path)
{
    const json_t *v = at(o, path);
    if (json_is_string(v) || json_is_integer(v) || json_is_boolean(v)) return json_copy((json_t *)v);
    if (json_is_real(v)) return json_real(json_real_value(v));
    return json_null();
}

static json_t *first_scalar(const json_t *o, const char *a, const char *b)
{
    json_t *v = scalar(o, a);
    if (json_is_null(v)) {
        json_decref(v);
        v = scalar(o, b);
    }
    return v;
}

/* the machine: what the system card says of the CPU, memory, kernel, GPU */
static json_t *machine_of(const json_t *card)
{
    json_t *m = json_object();
    const json_t *mem = at(card, "memory.total_mb");
    json_object_set_new(m, "cpu_model", first_scalar(card, "cpu.model_name", "cpu_name"));
    json_object_set_new(m, "microcode", scalar(card, "cpu.microcode"));
    json_object_set_new(m, "cores", scalar(card, "cpu.cores"));
    json_object_set_new(m, "logical_cpus", scalar(card, "cpu.threads"));
    json_object_set_new(m, "threads_per_core", scalar(card, "cpu.threads_per_core"));
    json_object_set_new(m, "smt_active", scalar(card, "cpu.smt_active"));
    json_object_set_new(m, "hypervisor", scalar(card, "cpu.hypervisor"));
    json_object_set_new(m, "kernel", first_scalar(card, "operating_system.kernel_release", "os"));
    json_object_set_new(m, "governor", scalar(card, "cpu.governor"));
    json_object_set_new(m, "boost", scalar(card, "cpu.boost"));
    /* MiB, whole: the kernel's MemTotal of the same machine and kernel */
    json_object_set_new(m, "memory_mb", json_is_number(mem)
                                            ? json_integer((json_int_t)floor(json_number_value(mem)))
                                            : json_null());
    json_object_set_new(m, "gpu_model", scalar(card, "gpu_name"));
    json_object_set_new(m, "gpu_count", scalar(card, "gpu_count"));
    return m;
}

/* the software around the model: rpxprof and what the target used */
static json_t *software_of(const json_t *report, const json_t *card, const json_t *section)
{
    json_t *s = json_object();
    json_object_set_new(s, "rpxprof", scalar(card, "build.rpxprof_version"));
    if (json_is_null(json_object_get(s, "rpxprof")))
        json_object_set_new(s, "rpxprof", scalar(report, "tool.version"));
    json_object_set_new(s, "python", scalar(card, "python_version"));
    json_object_set_new(s, "torch", scalar(card, "pytorch_version"));
    json_object_set_new(s, "numpy", scalar(section, "numpy_version"));
    json_object_set_new(s, "cuda", scalar(card, "cuda_version"));
    json_object_set_new(s, "driver", scalar(card, "driver_version"));
    json_object_set_new(s, "os", scalar(card, "operating_system.distribution"));
    json_object_set_new(s, "libc", scalar(card, "operating_system.libc_version"));
    return s;
}

static json_t *inputs_digest(const json_t *report)
{
    const json_t *sha = json_object_get(report, "inputs_sha256");
    char buf[80];
    if (!json_is_string(sha)) return json_null();
    snprintf(buf, sizeof buf, "sha256:%s", json_string_value(sha));
    return json_string(buf);
}

/* The work: the inputs and the options that change what is timed (the list is
 * docs/report.md#session's): precision, device, the warmup calls before the
 * timed ones, writable inputs (restored before every call), isolation, the
 * placement asked (--cpus, --spread), paced calls (--rate) or an HTTP load
 * (--rate x --duration, --concurrency, --arrivals), --gpu-time (a synchronise
 * after every call), --call-records full (counters read around every call)
 * and the batch size. The number of calls and processes is not work: it
 * changes how well a statistic is known, not what is timed. */
static json_t *work_of(const json_t *report, const json_t *card)
{
    json_t *w = json_object(), *sched = json_null();
    const json_t *ld = at(report, "http.load"), *pc = json_object_get(report, "pacing");
    const json_t *pl = json_object_get(report, "placement");
    json_object_set_new(w, "inputs_digest", inputs_digest(report));
    json_object_set_new(w, "precision", scalar(report, "precision"));
    json_object_set_new(w, "device", scalar(report, "device"));
    json_object_set_new(w, "warmup", scalar(report, "warmup_calls"));
    json_object_set_new(w, "writable_inputs", scalar(report, "inputs_writable"));
    json_object_set_new(w, "isolated", scalar(report, "isolated"));
    if (json_is_object(pl)) {
        json_t *p = json_object();
        json_object_set_new(p, "policy", scalar(pl, "policy"));
        json_object_set_new(p, "cpus", json_is_array(json_object_get(pl, "cpus_requested"))
                                           ? json_deep_copy(json_object_get(pl, "cpus_requested"))
                                           : json_null());
        json_object_set_new(w, "placement", p);
    } else {
        json_object_set_new(w, "placement", json_null());
    }
    if (json_is_object(ld)) {
        sched = json_object();
        json_object_set_new(sched, "http_rate_per_s", scalar(ld, "requested_rate_per_s"));
        json_object_set_new(sched, "concurrency", scalar(ld, "concurrency"));
        json_object_set_new(sched, "arrivals", scalar(ld, "arrivals"));
    } else if (json_is_object(pc)) {
        sched = json_object();
        json_object_set_new(sched, "rate_hz", scalar(pc, "rate_hz"));
    }
    json_object_set_new(w, "schedule", sched);
    json_object_set_new(w, "gpu_time", json_boolean(json_is_object(json_object_get(report, "gpu_time"))));
    json_object_set_new(w, "call_records", scalar(report, "call_records.mode"));
    json_object_set_new(w, "batch_size", scalar(card, "batch_size"));
    return w;
}

/* the benchmark's name: the batch job's task/model, else the target */
static json_t *name_of(const json_t *report)
{
    const json_t *task = json_object_get(report, "task"), *model = json_object_get(report, "model_name");
    if (json_is_string(task) && json_is_string(model)) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s/%s", json_string_value(task), json_string_value(model));
        return json_string(buf);
    }
    if (json_is_string(model)) return json_copy((json_t *)model);
    return scalar(report, "model_callable");
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static int set_digest(json_t *into, const char *key, const json_t *of)
{
    char hex[17];
    if (rpx__session_digest(of, hex) != 0) return -1;
    return json_object_set_new(into, key, json_string(hex));
}

json_t *rpx__session_block(const json_t *report, const char *id, const char *started,
                           const char *ended, json_t *version, int derived)
{
    const json_t *card = json_object_get(report, "system_card");
    const json_t *kind = json_object_get(report, "target_kind");
    const json_t *section = json_is_string(kind) ? json_object_get(report, json_string_value(kind)) : NULL;
    json_t *s = json_object(), *bench = json_object(), *fp = json_object(), *ident = json_object();
    json_t *work = work_of(report, card);
    int bad = !s || !bench || !fp || !ident || !work;
    if (!bad) {
        json_object_set_new(s, "id", str_or_null(id));
        json_object_set_new(s, "started", str_or_null(started));
        json_object_set_new(s, "ended", str_or_null(ended));
        json_object_set_new(s, "covers", json_string(RPX_SESSION_COVERS));
        /* the identity: what is measured, never which build of it */
        json_object_set_new(ident, "name", name_of(report));
        json_object_set_new(ident, "target", scalar(report, "model_callable"));
        json_object_set_new(ident, "kind", scalar(report, "target_kind"));
        json_object_set_new(ident, "inputs_digest", inputs_digest(report));
        json_object_set_new(ident, "unit", scalar(report, "unit"));
        json_object_set_new(ident, "work", json_deep_copy(work));
        bad |= set_digest(bench, "id", ident);
        json_object_update(bench, ident);
        json_object_set_new(fp, "machine", machine_of(card));
        json_object_set_new(fp, "software", software_of(report, card, section));
        json_object_set(fp, "work", work);
        bad |= set_digest(fp, "digest", fp);
        json_object_set(s, "benchmark", bench);
        json_object_set(s, "fingerprint", fp);
        if (!version) {   /* derived: a batch report's code_sha ($RPX_GIT_SHA) names its commit */
            const char *sha = json_string_value(json_object_get(report, "code_sha"));
            version = rpx__session_version(NULL, NULL, sha && *sha ? sha : NULL);
            if (version && sha && *sha)
                json_object_set_new(version, "commit_source", json_string("code_sha"));
        }
        json_object_set_new(s, "version", version ? version : json_null());
        version = NULL;
        if (derived) json_object_set_new(s, "derived", json_true());
        bad |= !json_is_object(json_object_get(s, "version"));
    }
    json_decref(version);
    json_decref(work);
    json_decref(ident);
    json_decref(bench);
    json_decref(fp);
    if (bad) {
        json_decref(s);
        return NULL;
    }
    return s;
}

int rpx_session_of_report(const json_t *report, json_t **session, rpx_error *err)
{
    const json_t *own = json_object_get(report, "session"), *created;
    char id[48], hex[17], day[24] = "00000000T000000Z";
    *session = NULL;
    if (!json_is_object(report))
        return rpx_error_set(err, RPX_EINVAL, "rpx_session_of_report: the report is not a JSON object");
    if (json_is_object(own)) {
        *session = json_incref((json_t *)own);
        return 0;
    }
    /* written before sessions: its start from created_utc ("2026-12-06T09:47:00Z"),
     * its random part from the content, so that one file always derives one id */
    created = json_object_get(report, "created_utc");
    if (json_is_string(created) && strlen(json_string_value(created)) >= 19) {
        const char *c = json_string_value(created);
        snprintf(day, sizeof day, "%.4s%.2s%.2sT%.2s%.2s%.2sZ", c, c + 5, c + 8, c + 11, c + 14, c + 17);
    }
    if (rpx__session_digest(report, hex) != 0) return rpx_error_set(err, RPX_ENOMEM, "out of memory");
    snprintf(id, sizeof id, "%s-%.8s", day, hex);
    *session = rpx__session_block(report, id, json_string_value(created), NULL, NULL, 1);
    return *session ? 0 : rpx_error_set(err, RPX_ENOMEM, "out of memory");
}
