/* kinds.h — the table of target kinds (docs/kinds.md), as hwloc's discovery
 * components: each kind is one file that exports one const rpx_kind, and
 * kinds.c lists them in the order the --model grammar tries them. A row says
 * how a --model text names the kind, checks and opens it, which files a run
 * of it reads (for the output guard), its plugin, its capabilities and its
 * words in the report. Nothing outside the kind files and kinds.c compares a
 * kind's name: the runner, the CLI, the report and compare ask a row for a
 * capability (rpx__kind_has) or its words. */
#ifndef RPX_TARGET_KINDS_H
#define RPX_TARGET_KINDS_H

#include <stddef.h>

#include "rpxprof/error.h"
#include "rpxprof/target.h"

/* What a kind is, as the rest of the tree needs to know it. */
enum {
    /* the model runs elsewhere (an API): its cost, device, roofline and
     * efficiency are not measured here, the options that describe them are
     * refused, the call records are off (a call's time is the server's) */
    RPX_KIND_REMOTE = 1u << 0,
    /* it sends requests: the inputs file is a request's body as bytes
     * (optional: --body, GET; one file; never edited in place), the request
     * options (--header, --method, --body, --prompts...) apply to it only */
    RPX_KIND_REQUESTS = 1u << 1,
    /* --rate is the kind's own open-loop load (--duration, --arrivals,
     * --concurrency shape it), not the runner's pacing of local calls */
    RPX_KIND_OWN_LOAD = 1u << 2,
    /* an interpreter runs in the process: with --no-isolate it may keep views
     * of the inputs after the run; its section names the interpreter's and
     * torch's versions for the system card (version, torch_version) */
    RPX_KIND_INTERPRETER = 1u << 3,
    /* the call is a C function of the model ABI: a failure shows its return
     * code and names NAME_setup */
    RPX_KIND_C_ABI = 1u << 4,
    /* a model file run by a runtime in this process (docs/runtimes.md): the
     * runtime options (--runtime, --threads, --inter-threads, --graph-opt)
     * apply to it only; with no --inputs its inputs are made from the file's
     * own (src/runner/model_file.c); an ONNX file is costed without --cost;
     * its section is the report's `runtime` */
    RPX_KIND_RUNTIME = 1u << 5,
    /* its targets' hooks have a per-node profiler (layers_begin/layers_end of
     * rpx_target_hooks): --layers is taken (a model file's runtimes) */
    RPX_KIND_LAYERS = 1u << 6,
};

/* The runtime that runs a model file, as the row's `runtime` hook resolves it
 * (the options, the file's suffix, where ORT's library is found). */
typedef struct rpx_runtime_choice {
    const char *runtime;          /* "ort", "opencv", "torch": the --runtime word */
    const char *name;             /* the runtime block's name: "onnxruntime", ... */
    const char *library;          /* ORT: the libonnxruntime path found; NULL otherwise */
    const char *other;            /* the runtime to suggest when this one fails, or NULL */
    int graph;                    /* 1: the file is an ONNX graph (costed; inputs read from it) */
    int defaulted;                /* 1: no --runtime: chosen by the suffix (and the library) */
} rpx_runtime_choice;

/* A plugin that ships with rpxprof (loaded only by a run of its kind). It
 * exports rpx_<name>_plugin_abi and rpx_<name>_plugin_open (plugins.h). */
typedef struct rpx_kind_plugin {
    const char *file;             /* "librpxprof-http.so" */
    const char *env;              /* the variable naming another file: "RPX_HTTP_PLUGIN" */
    const char *installed;        /* where `make install` put it, or NULL */
    int global;                   /* dlopen RTLD_GLOBAL (an interpreter's extension modules) */
} rpx_kind_plugin;

typedef struct rpx_kind {
    const char *name;             /* the report's target_kind: "http" */
    /* --- how a --model text names it (tried in the table's order) --- */
    const char *const *schemes;   /* URL prefixes, any case ("http://"), NULL-terminated */
    const char *const *suffixes;  /* file name endings (".onnx"), NULL-terminated */
    int (*claims)(const char *spec); /* any other grammar: 1 when `spec` is this kind's */
    /* --- what it does --- */
    /* the grammar beyond the claim, nothing opened: 0 or the error (the spec is
     * shown redacted) */
    int (*check)(const char *spec, rpx_error *err);
    /* t->spec and t->display_spec are set: resolve and load, fill the hooks */
    int (*open)(rpx_target *t, const rpx_target_options *opt, rpx_error *err);
    /* the files a run reads besides the plugin (pushed with rpx__strv_push):
     * 0, or -1 out of memory; files not found are left out */
    int (*files)(const char *spec, char ***list, size_t *n);
    /* the length of the local file's path that starts `spec` (a relative one
     * is relative to where the text was written: a manifest's folder), or -1
     * when it names none; NULL: never */
    long (*local_path)(const char *spec);
    const rpx_kind_plugin *plugin; /* NULL: none */
    /* --- capabilities --- */
    unsigned caps;                /* RPX_KIND_* */
    int default_processes;        /* with isolation and no --processes; 0: the runner's */
    /* --- words in the report and the pages --- */
    const char *words;            /* "an HTTP API" (the HTML page's headline) */
    const char *what;             /* what one call spans, for compare's reader */
    const char *scope;            /* timing_scope; NULL: profile.c's default */
    const char *scope_writable;   /* timing_scope with --writable-inputs */
    const char *scope_load;       /* timing_scope of its own open-loop load */
    const char *outputs_how;      /* --check-outputs refused: how to show outputs (NULL: the
                                     kind has none to check) */
    /* --- a model file's runtime (RPX_KIND_RUNTIME) --- */
    const char *section_key;      /* the report's key for the kind's section; NULL: `name` */
    /* which runtime runs `spec` with these options, refused (naming the fix)
     * when it cannot run here; `library` points into static storage */
    int (*runtime)(const char *spec, const rpx_target_options *opt, rpx_runtime_choice *out,
                   rpx_error *err);
    /* what a crash while loading or in setup adds to its message (the
     * runtime's crash, not the model's), or NULL */
    void (*setup_crash)(const char *spec, const rpx_target_options *opt, char *buf, size_t size);
} rpx_kind;

/* The row that `spec` names by the grammar (the last row claims what no
 * other does); never NULL. */
const rpx_kind *rpx__kind_of_spec(const char *spec);
/* The row called `name` (a report's target_kind, a caller-made target's
 * kind_name), or the shared objects' row for NULL or a name of no row. */
const rpx_kind *rpx__kind_named(const char *name);
/* The row called `name`, or NULL. */
const rpx_kind *rpx__kind_find(const char *name);
/* The row of a runner's target: a caller-made target's kind_name, else its
 * --model's (the shared objects' row for none); never NULL. */
const rpx_kind *rpx__kind_of_target(const char *model, const rpx_target_options *opt);
/* 1 when `k` has every capability of `caps`. */
static inline int rpx__kind_has(const rpx_kind *k, unsigned caps)
{
    return k && (k->caps & caps) == caps;
}
/* How row `k` claims `spec`: 2 by a URL scheme, 1 by a file suffix or its
 * claims function, 0 not (the last row of the table takes what none claims). */
int rpx__kind_claims(const rpx_kind *k, const char *spec);
/* The rows, in grammar order; *n their number. */
const rpx_kind *const *rpx__kinds(size_t *n);

/* The grammar: the row `spec` names, checked (the common rules, then the
 * row's check); `shown` is the spec as messages show it (redacted). */
int rpx__kind_match(const char *spec, const char *shown, const rpx_kind **kind, rpx_error *err);

/* What the grammar accepts, in the messages that refuse a --model. */
#define RPX_KIND_EXPECTED \
    "PATH/lib.so:SYMBOL, rpxprof-demo:SYMBOL, module:function, PATH/module.py:function, " \
    "a model file (MODEL.onnx, MODEL.pt) or an http(s):// URL"

/* Helpers the kind files share (callable.c). `spec` is MODULE:FUNCTION or PATH:SYMBOL. */
/* The callable grammar: a ':SYMBOL' that is a valid function name. */
int rpx__kind_check_callable(const char *spec, rpx_error *err);
/* letters, digits and '_' not starting with a digit; with `dots`, dotted */
int rpx__kind_identifier(const char *s, size_t n, int dots);
/* 1 when the n bytes at s (the MODULE of MODULE:FUNCTION) name a Python module's
 * file: a path ending in ".py" (base/mypkg/model.py), run by the Python kind. */
int rpx__kind_python_file(const char *s, size_t n);
/* Load the kind's plugin and let it fill t from the kind's options `opts`
 * (name = value pairs, loader/kv.h; NULL: none). RPX_EUNSUPPORTED, no
 * message, when its file is not found: the kind says what to do. */
struct rpx_kv_list;
int rpx__plugin_open(const char *kind, const rpx_kind_plugin *p, rpx_target *t,
                     const struct rpx_kv_list *opts, rpx_error *err);
/* The plugin's file that a run would load, or NULL when none is found. */
const char *rpx__plugin_path(const rpx_kind_plugin *p, char *buf, size_t size);

/* The HTTP kind's options to and from name = value pairs (kind_http.c): the
 * host writes them, the plugin reads them back into its own copy. */
struct rpx_kv_list;
int rpx__http_options_write(const rpx_target_options *opt, struct rpx_kv_list *out);
int rpx__http_options_read(const struct rpx_kv_list *kv, rpx_target_options *opt, rpx_error *err);

/* The kinds (one file each). */
extern const rpx_kind rpx__kind_http;
extern const rpx_kind rpx__kind_model_file;
extern const rpx_kind rpx__kind_shared_object;
extern const rpx_kind rpx__kind_python;

#endif
