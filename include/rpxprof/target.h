/* rpxprof/target.h — how a callable is reached.
 *
 * Every kind of target (shared object, packaged demo, Python callable, HTTP
 * API) hands the timing loop the same thing: a call function with the model
 * ABI's signature plus its state. The loop knows nothing else about it.
 *
 * Each kind is a row of the kinds table (src/loader/kinds.h, docs/kinds.md).
 *
 * Lifecycle: rpx_target_open(spec) → rpx_target_setup → (timed calls through
 * target->hooks.call, each followed by the optional after_call hook outside the
 * timed span) → rpx_target_section (the report's section for the kind) →
 * rpx_target_close (runs teardown, unloads).
 *
 * Grammar of --model: http://… or https://… is an HTTP API; PATH:SYMBOL where
 * PATH has a '/' or ends in .so (or has .so.) is a shared object;
 * rpxprof-demo:SYMBOL is the packaged demo; any other MODULE:FUNCTION is a
 * Python callable (module imported from the current folder, PYTHONPATH or
 * the active virtualenv). */
#ifndef RPXPROF_TARGET_H
#define RPXPROF_TARGET_H

#include <jansson.h>
#include <stddef.h>

#include "rpxprof/model.h"

#include "rpxprof/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rpx_run_config;
struct rpx_run_result;

typedef int (*rpx_call_fn)(void *state, const rpx_inputs *inputs, rpx_error *error);

struct rpx_kind; /* a row of the kinds table (src/loader/kinds.h, docs/kinds.md) */

/* What a target's call is and what runs around it: one struct for every
 * maker of a target. A kind's open (a plugin's too) fills rpx_target.hooks;
 * a target made by the caller instead of parsed from a spec (the Python
 * package hands its callable this way) is one of these given as
 * rpx_target_options.custom, and its spec then only names it in reports and
 * messages. Every function is optional except `call`; all run outside the
 * timed span except `call`. `setup` receives `*state == state` and may
 * replace it. */
typedef struct rpx_target_hooks {
    /* a caller-made target: what the report calls its kind ("python"), a row
     * of the kinds table; a kind's open leaves it NULL */
    const char *kind_name;
    rpx_call_fn call;             /* the timed call */
    void *state;                  /* handed to every hook; set by open or setup */
    int (*setup)(void **state, const rpx_inputs *inputs, const rpx_run_info *info,
                 rpx_error *error); /* once, before the first call */
    void (*teardown)(void *state); /* once, after the last call, when setup ran */
    void (*unload)(void *state);  /* frees what open made (after teardown) */
    void (*after_call)(void *state, int timed, int rc); /* after every call */
    void (*peaks_reset)(void *state); /* after warmup, with the host peaks */
    json_t *(*section)(void *state); /* the report's section for this kind */
    /* Distinct samples and writable inputs: after setup, outside timing, the
     * runner hands every sample (the same array names in each); the timed
     * calls then receive &samples[k], the same pointers, cycling. `writable`:
     * the arrays may be edited in place (the runner restores their bytes
     * before every call); otherwise the target keeps them read-only. Without
     * it a kind receives each sample's inputs in its call. */
    int (*samples)(void *state, const rpx_inputs *samples, size_t n, int writable,
                   rpx_error *error);
    /* --check-outputs: what the last call returned, read after it and outside
     * the timed span, before after_call (which may release it); valid until
     * the next call. A shared object's NAME_outputs, a Python callable's
     * return value, an HTTP response body. NULL: the kind cannot show its
     * outputs. */
    int (*outputs)(void *state, rpx_outputs *outputs, rpx_error *error);
    /* asked once after setup when outputs will be read (an HTTP target then
     * keeps each response body; without it only counts it) */
    void (*keep_outputs)(void *state, int keep);
    /* the target runs the whole loop itself (an HTTP open-loop load):
     * rpx_measure_run hands it its arguments and returns what it returns */
    int (*run)(void *state, const struct rpx_run_config *cfg, const rpx_inputs *inputs,
               struct rpx_run_result *result, rpx_error *error);
    /* --layers (docs/runtimes.md): the runtime's own per-node profiler, for
     * separate profiled calls after the timed ones (never during them).
     * layers_begin turns it on; the runner then makes its profiled calls
     * through `call`; layers_end turns it off and returns (a new reference)
     * a JSON array with one object per node run in each of those calls:
     * {"call": k (0-based among the profiled calls), "name": the node as the
     * runtime ran it, "op_type": its operator, "nodes": [the model file's
     * node names it covers] or null when it is the node of that name itself,
     * "time_ms": its time}. NULL: the kind has no per-node profiler. */
    int (*layers_begin)(void *state, rpx_error *error);
    int (*layers_end)(void *state, json_t **events, rpx_error *error);
    int counts_failures;          /* see RPX_CALL_COUNTED_FAILURE */
    /* with counts_failures: 0 (the default), a counted failure of a warmup call
     * ends the run at once (status RPX_RUN_TOO_MANY_FAILURES, the reason in the
     * error); 1, it counts towards max_failures like a timed call's */
    int allow_warmup_failures;
    /* around the fork of each worker process (in the parent before and after,
     * in the child after), so that an interpreter living in this process stays
     * consistent (a caller-made target's) */
    void (*before_fork)(void *arg);
    void (*after_fork_parent)(void *arg);
    void (*after_fork_child)(void *arg);
    void *fork_arg;
} rpx_target_hooks;

/* The name a caller-made target's hooks had before they were one struct. */
typedef rpx_target_hooks rpx_target_custom;

/* What some kinds need beyond the spec. Zero-initialise; every field is optional.
 * These are the caller's (the runner's) fields: a kind's plugin never sees this
 * struct, its options reach it as name = value pairs (docs/kinds.md), so a
 * field added here changes no plugin ABI. */
typedef struct rpx_target_options {
    const char *inputs_path;      /* the NPZ file: an HTTP call's default body */
    const char *body_path;        /* HTTP --body FILE instead */
    const char *const *headers;   /* HTTP --header 'K: V' (${VAR} from the environment) */
    size_t n_headers;
    const char *method;           /* HTTP --method (NULL: POST) */
    double connect_timeout_s;     /* <= 0: 10 s */
    double total_timeout_s;       /* <= 0: 60 s */
    int insecure;                 /* HTTP --insecure: no TLS verification */
    int http2;                    /* HTTP --http2: h2c with prior knowledge; over TLS h2 by ALPN,
                                     required */
    const rpx_target_hooks *custom; /* a caller-made target (see above); the spec names it */
    const char *stream;           /* HTTP --stream sse|lines|chunked (NULL: by Content-Type) */
    const char *tokens_field;     /* HTTP --tokens-field PATH (NULL: usage.completion_tokens) */
    long keep_events;             /* HTTP --keep-events: event timestamps kept; 0: 1000, <0: none */
    const char *slo;              /* HTTP --slo ttft=500ms,tpot=50ms,e2e=2s (NULL: no goodput) */
    double load_rate;             /* HTTP --rate R (> 0: open-loop load; 0: one call after another) */
    int load_poisson;             /* HTTP --arrivals poisson (else constant) */
    double load_duration_s;       /* HTTP --duration S: rate * S requests (the runner's repeats) */
    long load_concurrency;        /* HTTP --concurrency C (<= 0: 64) */
    unsigned long long load_seed; /* HTTP --seed N for Poisson arrivals */
    int load_engine;              /* HTTP --load-engine: 0 auto, 1 curl, 2 sockets */
    double load_drain_s;          /* HTTP --drain S: with --rate, how long the requests in flight
                                     when --duration ends may still take (then: timed out);
                                     0: the default (RPX_HTTP_DEFAULT_DRAIN_S); < 0: none */
    int allow_warmup_failures;    /* HTTP --allow-warmup-failures: a failed warmup call counts
                                     towards max_failures instead of ending the run at once */
    const char *output_field;     /* HTTP --output-field PATH: the response's output is this
                                     JSON value of the body (NULL: the whole body) */
    /* HTTP bodies that vary (docs/audits.md): --body-template FILE (JSON)
     * with --prompts FILE.jsonl: request i sends the template with the field
     * --prompt-field PATH (default "prompt") set to the value of line k of
     * the file (each line a JSON value; k = i cycled, or drawn with load_seed
     * when prompts_sample); --nonce FIELD: a unique string at that dotted path
     * of every body (the template's, or --body's JSON). body_repeat: every
     * request sends the first body (the cache audit's repeated arm).
     * nonce_prefix: the nonce goes before the string already at nonce_field
     * (the cache audit's distinct arm on a fixed --body: a prompt that starts
     * differently defeats a prefix cache too). */
    const char *body_template;
    const char *prompts_path;
    const char *prompt_field;
    int prompts_sample;
    const char *nonce_field;
    int body_repeat;
    int nonce_prefix;
    long bodies_first;            /* the bodies sent by the processes before this one (set by the
                                     runner): the cycle goes on where they stopped */
    /* A model file run by a runtime (docs/runtimes.md): --runtime ort|opencv|torch (NULL: by
     * the file's suffix), --threads and --inter-threads (0: the runtime's default),
     * --graph-opt none|basic|extended|all (NULL: the runtime's default), the seed the
     * runtime is given (the generated inputs' seed) */
    const char *runtime;
    long threads;
    long inter_threads;
    const char *graph_opt;
    unsigned long long model_seed;
} rpx_target_options;

#define RPX_HTTP_DEFAULT_DRAIN_S 5.0

/* A call of a target with counts_failures set returns this for a failure that
 * is counted (failed_calls) and is not a latency sample; any other non-zero
 * return stops the run as for every target. */
#define RPX_CALL_COUNTED_FAILURE 1

typedef struct rpx_target {
    const struct rpx_kind *kind;  /* its row in the kinds table: capabilities, words */
    const char *kind_name;        /* "shared_object", "python", "http" */
    char *spec;                   /* the --model text as given */
    char *display_spec;           /* the same for reports: credentials in URLs redacted */
    char *path;                   /* resolved library path (shared objects), module (Python) */
    char *symbol;                 /* function name */
    rpx_target_hooks hooks;       /* filled by the kind's open (see above) */
    /* internal */
    void *handle;                 /* a shared object's dlopen handle */
    int setup_done;
} rpx_target;

/* Parse `spec` (PATH:SYMBOL, rpxprof-demo:SYMBOL, module:function, http(s)://...)
 * and load it. Errors name the target and the fix. `opt` may be NULL. */
RPX_API int rpx_target_open(const char *spec, rpx_target **out, rpx_error *err);
RPX_API int rpx_target_open_ex(const char *spec, const rpx_target_options *opt, rpx_target **out,
                       rpx_error *err);
/* The kind `spec` names by the grammar above ("shared_object", "python",
 * "http"), without loading anything. */
RPX_API const char *rpx_target_kind_name(const char *spec);
/* The --model text's grammar alone (nothing is opened): 0, or RPX_EINVAL /
 * RPX_EUNSUPPORTED with the message that rpx_target_open_ex would give. */
RPX_API int rpx_target_check_spec(const char *spec, rpx_error *err);
/* The files a run of `spec` resolves and reads, found as opening it would find
 * them but without loading anything: a shared object's file, the packaged
 * demo library, the plugin of a Python or HTTP target, and the files
 * importing a Python module reads (each package's __init__.py, the module's
 * file: asked of the Python plugin in a child process). The output guard
 * never replaces them (rpx_output_options.protect). 0 and a malloc'ed list
 * of malloc'ed paths (NULL-terminated, possibly empty; files that cannot be
 * found are left out, opening the target names them); RPX_ENOMEM. */
RPX_API int rpx_target_files(const char *spec, char ***files, size_t *n_files, rpx_error *err);
/* Run the optional setup once (outside timing). */
RPX_API int rpx_target_setup(rpx_target *t, const rpx_inputs *inputs, const rpx_run_info *info,
                     rpx_error *err);
/* Hand the target every distinct sample (see rpx_target_hooks.samples); 0 when it has no
 * such hook. Call after rpx_target_setup. */
RPX_API int rpx_target_samples(rpx_target *t, const rpx_inputs *samples, size_t n, int writable,
                       rpx_error *err);
/* The kind's report section (a new reference), or NULL when it has none. */
RPX_API json_t *rpx_target_section(rpx_target *t);
/* Run teardown (if setup ran) and unload. NULL is fine. */
RPX_API void rpx_target_close(rpx_target *t);

/* `spec` with the user:password of a URL and the values of query parameters
 * that look like secrets (key, token, secret, password, signature, ...)
 * replaced by "REDACTED". Other specs are copied. malloc'ed; NULL out of memory. */
RPX_API char *rpx_target_redact_spec(const char *spec);
/* 1 when an HTTP header with this name carries a secret (Authorization,
 * Proxy-Authorization, Cookie, API keys, tokens): its value is never reported. */
RPX_API int rpx_http_header_is_secret(const char *name);
/* HTTP --slo "ttft=500ms,tpot=50ms,e2e=2s" (units ms, s, us; a bare number is ms; e2el is
 * e2e): each SLO in ms into ttft_ms, tpot_ms, e2e_ms (NaN where not given). 0, or RPX_EINVAL
 * with the message naming the part and the fix. The CLI checks --slo with it before a run
 * (a bad value is a bad command line), the HTTP target reads it. */
/* How many distinct request bodies a run with these options sends at most:
 * the distinct lines of --prompts, SIZE_MAX with --nonce (each body unique),
 * else 1; 0 when the prompts file cannot be read. */
RPX_API size_t rpx_http_distinct_bodies(const rpx_target_options *o);
RPX_API int rpx_http_slo_parse(const char *slo, double *ttft_ms, double *tpot_ms, double *e2e_ms,
                               rpx_error *err);

/* Path of the packaged demo library (librpxprof-demo.so), found next to the
 * running rpxprof, in ../lib/rpxprof, or where it was installed; the
 * environment variable RPX_DEMO_LIBRARY overrides. NULL if not found. */
RPX_API const char *rpx_demo_library_path(char *buf, size_t size);
/* The same search for another file that ships with rpxprof (the Python
 * plugin librpxprof-python.so): `env` overrides, then next to the library or
 * the executable, then ../lib/rpxprof, then `installed`. NULL if not found. */
RPX_API const char *rpx_companion_path(const char *file, const char *env, const char *installed,
                               char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
