/* options.c — owns a run's options as data (include/rpxprof/options.h): the
 * table (name, kind, range, default, help, field), setting one from text or
 * a number with its range checked, and the one check of a whole
 * rpx_runner_config (ranges and combinations) that `rpxprof run`, the batch
 * manifest, the Python extension and the runner itself call. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpxprof/options.h"
#include "rpxprof/target.h"
#include "loader/kinds.h"
#include "runner/runner_internal.h"

#define F(field) offsetof(rpx_runner_config, field)
/* the front ends that take an option besides `rpxprof run` */
#define CLI RPX_OPT_IN_CLI
#define MAN RPX_OPT_IN_MANIFEST
#define PY RPX_OPT_IN_PY
#define CMP RPX_OPT_IN_COMPARE

static const char *const devices[] = {"cpu", "cuda", NULL};
static const char *const streams[] = {"sse", "lines", "chunked", NULL};
static const char *const arrivals[] = {"constant", "poisson", NULL};
static const char *const engines[] = {"auto", "curl", "sockets", NULL};
/* index = RPX_CALL_RECORDS_* */
static const char *const call_records[] = {"cpu", "full", "off", NULL};
static const char *const prompt_orders[] = {"cycle", "shuffle", NULL};
static const char *const runtimes[] = {"ort", "opencv", "torch", NULL};
static const char *const graph_opts[] = {"none", "basic", "extended", "all", NULL};

/* In `rpxprof run --help` order. Options that are not one field of the
 * config (--model, --inputs, --output, --meta, --input, --dim, --header,
 * --budget-hz, --compare-back-to-back, --quiet) stay with the CLI. */
static const rpx_run_option table[] = {
    {"writable-inputs", "writable_inputs", RPX_OPT_FLAG, RPX_OPT_INT_FIELD | CLI | PY | CMP, 0, 1,
     0, NULL, NULL,
     0, NULL, NULL, NULL,
     "the model may edit its input arrays in place: their bytes are restored before every "
     "call, outside the timed span (inputs_restore); without it the arrays are read-only and a"
     " write into them crashes the call",
     F(writable_inputs)},
    {"force", "force", RPX_OPT_FLAG, RPX_OPT_INT_FIELD | CLI, 0, 1, 0, NULL, NULL, 0, NULL, NULL,
     NULL,
     "replace an existing file that is not a report (never the inputs or the model)",
     F(force)},
    {"device", "device", RPX_OPT_ENUM,
     RPX_OPT_ENUM_TEXT | RPX_OPT_TEXT_DEFAULT | CLI | MAN | PY | CMP, 0, 0, 0, devices,
     "DEV", 0, "cpu", NULL, NULL,
     "cpu or cuda",
     F(device)},
    {"precision", "precision", RPX_OPT_STRING, RPX_OPT_TEXT_DEFAULT | CLI | MAN | PY | CMP, 0, 0, 0,
     NULL, "STR", 0,
     "unspecified", "e.g. fp32, fp16, bf16, int8", NULL,
     "recorded as given",
     F(precision)},
    {"unit", "unit", RPX_OPT_STRING,
     RPX_OPT_TEXT_DEFAULT | CLI | MAN | PY | CMP | RPX_OPT_MANIFEST_TASK, 0, 0, 0, NULL, "STR", 0,
     "request",
     "e.g. frame, clip, pair, request", NULL,
     "what one call processes: frame, clip, pair, request",
     F(unit)},
    {"warmup", "warmup", RPX_OPT_INT, CLI | MAN | PY | CMP, 0, RPX_RUNNER_MAX_WARMUP, 0, NULL, "N",
     10, "10", NULL,
     NULL,
     "untimed calls first, in every process",
     F(warmup)},
    {"repeats", "repeats", RPX_OPT_INT, CLI | MAN | PY | CMP, 1, RPX_RUNNER_MAX_REPEATS, 0, NULL,
     "N", 1000, "1000",
     NULL,
     "every timed call keeps its sample in memory and in the report; split a longer "
     "measurement into several runs",
     "timed calls, one sample each",
     F(repeats)},
    {"rate", "rate", RPX_OPT_DOUBLE, CLI, 0, 1e9, 1, NULL, "HZ", 0, NULL, NULL, "calls per second",
     "paced calls: one timed call per 1/HZ s on absolute deadlines, late starts counted (the "
     "report's pacing; HZ joins --budget-hz); HTTP: open-loop load, below",
     F(rate_hz)},
    {"gpu-time", "gpu_time", RPX_OPT_FLAG, RPX_OPT_INT_FIELD | CLI | MAN, 0, 1, 0, NULL, NULL, 0,
     NULL, NULL,
     NULL,
     "cuda: per-call GPU busy time from CUPTI kernel records",
     F(gpu_time)},
    {"cost", "cost", RPX_OPT_STRING, CLI | MAN | PY | RPX_OPT_MANIFEST_MODEL, 0, 0, 0, NULL,
     "MODEL.onnx", 0, NULL, "an ONNX file",
     NULL,
     "cost the model's graph (input shapes from the NPZ arrays of the same names; "
     "--input/--dim bind the rest)",
     F(cost)},
    {"flops", "flops", RPX_OPT_DOUBLE, CLI | MAN | PY | RPX_OPT_MANIFEST_MODEL, 0, HUGE_VAL, 0,
     NULL, "N", NAN, NULL,
     "a number such as 4878.9e9", NULL,
     "declare FLOPs per call for a model without a graph",
     F(flops)},
    {"params", "params", RPX_OPT_DOUBLE, CLI | MAN | PY | RPX_OPT_MANIFEST_MODEL, 0, HUGE_VAL, 0,
     NULL, "N", NAN, NULL,
     "a number such as 4878.9e9", NULL,
     "declare its parameter count",
     F(params)},
    {"gpu", "gpus", RPX_OPT_STRING, CLI | MAN | PY | RPX_OPT_MANIFEST_DEFAULTS, 0, 0, 0, NULL,
     "KEY[,KEY]", 0, NULL,
     "GPU keys (rpxprof gpus)", NULL,
     "roofline targets (rpxprof gpus); default: the detected GPU on cuda runs, the host CPU "
     "and the reference set",
     F(gpus)},
    {"gpu-spec", "gpu_spec", RPX_OPT_STRING, CLI, 0, 0, 0, NULL, "FILE", 0, NULL, "a JSON file",
     NULL,
     "add or override GPU specs (also RPX_GPU_SPECS)",
     F(gpu_spec)},
    {"tf32", "tf32", RPX_OPT_FLAG, RPX_OPT_INT_FIELD | CLI, 0, 1, 0, NULL, NULL, 0, NULL, NULL,
     NULL,
     "fp32 dense ops run on TF32 tensor cores",
     F(tf32)},
    {"runtime", "runtime", RPX_OPT_ENUM, RPX_OPT_RUNTIME | RPX_OPT_ENUM_TEXT | CLI | MAN | PY, 0,
     0, 0, runtimes, "R", 0, "ort for .onnx where its library is found, else opencv; torch for "
     ".pt", NULL, NULL,
     "the runtime that runs a model file: ort (ONNX Runtime), opencv (OpenCV DNN) or torch "
     "(libtorch, TorchScript)",
     F(target.runtime)},
    {"threads", "threads", RPX_OPT_INT, RPX_OPT_RUNTIME | CLI | MAN | PY, 0, 4096, 0, NULL, "N",
     0, "0: the runtime's own", NULL, NULL,
     "the runtime's intra-op threads (0: its default)",
     F(target.threads)},
    {"inter-threads", "inter_threads", RPX_OPT_INT, RPX_OPT_RUNTIME | CLI | MAN | PY, 0, 4096, 0,
     NULL, "N", 0, "0: the runtime's own", NULL, NULL,
     "the runtime's inter-op threads (0: its default)",
     F(target.inter_threads)},
    {"graph-opt", "graph_opt", RPX_OPT_ENUM, RPX_OPT_RUNTIME | RPX_OPT_ENUM_TEXT | CLI | MAN | PY,
     0, 0, 0, graph_opts, "L", 0, "the runtime's own (ort: all)", NULL, NULL,
     "graph optimisation level: none, basic, extended or all",
     F(target.graph_opt)},
    {"body", "body", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "FILE", 0, NULL, "a file",
     NULL,
     "send FILE instead of the NPZ file's bytes (then, and with GET or HEAD, --inputs is not "
     "needed)",
     F(target.body_path)},
    {"body-template", "body_template", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "FILE", 0,
     NULL, "a JSON file", NULL,
     "with --prompts: each request sends this JSON with the field --prompt-field set to the "
     "next prompt (docs/audits.md); the report's http.bodies counts the distinct bodies sent",
     F(target.body_template)},
    {"prompts", "prompts", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "FILE.jsonl", 0, NULL,
     "a JSON Lines file", NULL,
     "the prompts for --body-template, one JSON value a line, cycled over the run's requests",
     F(target.prompts_path)},
    {"prompt-field", "prompt_field", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "PATH", 0,
     "prompt", "a dotted path such as prompt or messages.0.content", NULL,
     "where each prompt goes in the template: a dotted path (numbers index arrays)",
     F(target.prompt_field)},
    {"prompts-order", "prompts_order", RPX_OPT_ENUM, RPX_OPT_HTTP | RPX_OPT_INT_FIELD | CLI, 0, 0,
     0,
     prompt_orders, "O", 0, "cycle", NULL, NULL,
     "cycle: the prompts in file order; shuffle: in a permutation drawn from --seed",
     F(target.prompts_sample)},
    {"nonce", "nonce", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "FIELD", 0, NULL,
     "a dotted path such as user or metadata.nonce", NULL,
     "put a unique string at this dotted path of every body (the template's, or --body's JSON)"
     ", so that no two requests are alike",
     F(target.nonce_field)},
    {"server-metrics", "server_metrics", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "URL",
     0,
     NULL, "an http:// URL such as http://host:8000/metrics", NULL,
     "read the server's Prometheus prefix-cache counters (vLLM's) before and after the run: "
     "the report's server_metrics has the hit rate, warned about above 1%",
     F(server_metrics)},
    {"method", "method", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "M", 0, "POST",
     "an HTTP method", NULL,
     "HTTP method; GET and HEAD send no body",
     F(target.method)},
    {"connect-timeout", "connect_timeout", RPX_OPT_DURATION, RPX_OPT_HTTP | CLI, 0, 1e9, 1, NULL,
     "S",
     0, "10", NULL, NULL,
     "seconds to connect",
     F(target.connect_timeout_s)},
    {"request-timeout", "request_timeout", RPX_OPT_DURATION, RPX_OPT_HTTP | CLI, 0, 1e9, 1, NULL,
     "S",
     0, "60", NULL, NULL,
     "seconds for one whole request",
     F(target.total_timeout_s)},
    {"max-failures", "max_failures", RPX_OPT_INT, RPX_OPT_HTTP | CLI, 0, 9.2e18, 0, NULL, "N", 100,
     "100", "a whole number, 0 (no limit) or more", NULL,
     "stop after N failed calls; 0: no limit",
     F(max_failures)},
    {"allow-warmup-failures", "allow_warmup_failures", RPX_OPT_FLAG,
     RPX_OPT_HTTP | RPX_OPT_INT_FIELD | CLI, 0, 1, 0, NULL, NULL, 0, NULL, NULL, NULL,
     "a failed warmup call counts towards --max-failures; without it the first one ends the run "
     "with its reason",
     F(target.allow_warmup_failures)},
    {"insecure", "insecure", RPX_OPT_FLAG, RPX_OPT_HTTP | RPX_OPT_INT_FIELD | CLI, 0, 1, 0, NULL,
     NULL,
     0, NULL, NULL, NULL,
     "do not verify the server's TLS certificate (recorded)",
     F(target.insecure)},
    {"http2", "http2", RPX_OPT_FLAG, RPX_OPT_HTTP | RPX_OPT_INT_FIELD | CLI, 0, 1, 0, NULL, NULL, 0,
     NULL, NULL, NULL,
     "HTTP/2: with prior knowledge for http://, required by ALPN for https://; under --rate, "
     "requests multiplexed",
     F(target.http2)},
    {"stream", "stream", RPX_OPT_ENUM, RPX_OPT_HTTP | RPX_OPT_ENUM_TEXT | CLI, 0, 0, 0, streams,
     "MODE",
     0, NULL, NULL, NULL,
     "read every response as a stream of events: sse, lines or chunked (default: sse when the "
     "response's Content-Type is text/event-stream); http.streaming reports TTFT, ITL, TPOT, "
     "end to end, tokens/s",
     F(target.stream)},
    {"tokens-field", "tokens_field", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "PATH", 0,
     NULL, "a dotted path", NULL,
     "a response's output tokens: the last number at this dotted path in its events' JSON "
     "(default usage.completion_tokens; else one per content event)",
     F(target.tokens_field)},
    {"keep-events", "keep_events", RPX_OPT_INT, RPX_OPT_HTTP | RPX_OPT_ZERO_IS_NONE | CLI, 0, 1e8,
     0,
     NULL, "N", 0, "1000", "a whole number from 0 (none) to 100000000", NULL,
     "keep N raw event timestamps; 0: none",
     F(target.keep_events)},
    {"slo", "slo", RPX_OPT_STRING, RPX_OPT_HTTP | CLI, 0, 0, 0, NULL, "LIST", 0, NULL,
     "e.g. ttft=500ms,tpot=50ms,e2e=2s", NULL,
     "goodput: the share of requests meeting every SLO, e.g. ttft=500ms,tpot=50ms,e2e=2s",
     F(target.slo)},
    {"duration", "duration", RPX_OPT_DURATION, CLI, 0, 1e9, 1, NULL, "S", 0, NULL,
     "a number above 0", "seconds",
     "with --rate: seconds of schedule (R x S requests, or R x S paced calls of a local model); "
     "it bounds the run: then the requests in flight get --drain, the rest are dropped",
     F(target.load_duration_s)},
    {"drain", "drain", RPX_OPT_DURATION, RPX_OPT_HTTP | RPX_OPT_ZERO_IS_NONE | CLI, 0, 1e6, 0, NULL,
     "S", 0, "5", "a number of seconds, 0 or more", NULL,
     "after --duration, how long requests in flight may take before they count as timed out; a "
     "warmup call waits at most --duration + --drain",
     F(target.load_drain_s)},
    {"arrivals", "arrivals", RPX_OPT_ENUM, RPX_OPT_HTTP | RPX_OPT_INT_FIELD | CLI, 0, 0, 0,
     arrivals, "A",
     0, "constant", NULL, NULL,
     "constant or poisson, seeded by --seed N",
     F(target.load_poisson)},
    {"concurrency", "concurrency", RPX_OPT_INT, RPX_OPT_HTTP | CLI, 1, 100000, 0, NULL, "C", 0,
     "64",
     NULL, NULL,
     "requests in flight at most",
     F(target.load_concurrency)},
    {"seed", "seed", RPX_OPT_INT, RPX_OPT_HTTP | RPX_OPT_ULL | CLI, 0, 9.2e18, 0, NULL, "N", 0, "1",
     NULL,
     NULL,
     "the seed of --arrivals poisson and --prompts-order shuffle",
     F(target.load_seed)},
    {"load-engine", "load_engine", RPX_OPT_ENUM, RPX_OPT_HTTP | RPX_OPT_INT_FIELD | CLI, 0, 0, 0,
     engines, "E", 0, "auto", "expected auto, sockets or curl", NULL,
     "auto: plain sockets for http://, curl for https, --http2 and proxies; sockets; curl",
     F(target.load_engine)},
    {"processes", "processes", RPX_OPT_INT, RPX_OPT_INT_FIELD | CLI | MAN | PY | CMP, 1,
     RPX_RUNNER_MAX_PROCESSES, 0, NULL,
     "K", 0, "5; 1 for HTTP, --gpu-time and --no-isolate", NULL, NULL,
     "spread the timed calls over K fresh worker processes, one after another, each with its "
     "own setup and warmup: the intervals then cover run-to-run variation",
     F(processes)},
    {"cpus", "cpus", RPX_OPT_STRING, CLI | MAN | PY | CMP, 0, 0, 0, NULL, "LIST", 0, NULL,
     "CPU numbers and ranges separated by commas, such as 1, 2-3 or 0,2", NULL,
     "run the model's process and every thread it starts on these CPUs (1, 2-3, 0,2; among the"
     " CPUs rpxprof itself may use); default: the inherited mask. The report's placement says "
     "where each process ran",
     F(cpus)},
    {"spread", "spread", RPX_OPT_FLAG, RPX_OPT_INT_FIELD | CLI | MAN | PY, 0, 1, 0, NULL, NULL, 0,
     NULL, NULL,
     NULL,
     "give the processes the --cpus (else the allowed) CPUs in turn, one CPU each, the same "
     "number of processes on each: K is rounded up to a multiple of the CPUs",
     F(spread)},
    {"target-precision", "target_precision", RPX_OPT_FRACTION, CLI | PY, 0, 0.5, 1, NULL, "P", 0,
     NULL,
     "the half width of the p50's 95% interval wanted, relative to it: 1% or 0.01 (above 0, at "
     "most 50%)",
     NULL,
     "add processes (each of --repeats/K calls) until the p50's 95% interval is within +-P of "
     "it (1% or 0.01)",
     F(target_precision)},
    {"max-time", "max_time", RPX_OPT_DURATION, CLI | PY | CMP, 0, 1e7, 1, NULL, "S", 0,
     "60; 10 with --auto", NULL, NULL,
     "... or S seconds have passed; with --auto: the whole run ends within S seconds",
     F(max_time_s)},
    {"auto", "auto", RPX_OPT_FLAG, RPX_OPT_INT_FIELD | CLI | MAN | PY | CMP, 0, 1, 0, NULL, NULL,
     0, NULL, NULL, NULL,
     "auto-ranging instead of --repeats: the timed calls go on, re-planned from those measured"
     " so far, until they took --min-time and the p50's 95% interval is within "
     "--target-precision (1%), or until the run would pass --max-time (10 s); the report's "
     "autorange says what was chosen",
     F(autorange)},
    {"min-time", "min_time", RPX_OPT_DURATION, CLI | MAN | PY | CMP, 0, 1e7, 1, NULL, "S", 0, "1",
     NULL, NULL,
     "with --auto: the timed calls take at least S seconds (when --max-time allows)",
     F(min_time_s)},
    {"timeout", "timeout", RPX_OPT_DURATION, CLI | PY | CMP, 0, 1e9, 1, NULL, "S", 0, NULL, NULL,
     NULL,
     "kill the run after S seconds (status timed_out)",
     F(timeout_s)},
    {"call-timeout", "call_timeout", RPX_OPT_DURATION, CLI | PY | CMP, 0, 1e9, 1, NULL, "S", 0,
     NULL, NULL,
     NULL,
     "kill it when one call takes more than S seconds (resolution about 1 ms)",
     F(call_timeout_s)},
    {"setup-timeout", "setup_timeout", RPX_OPT_DURATION, CLI, 0, 1e9, 1, NULL, "S", 0, NULL, NULL,
     NULL,
     "kill it when loading and setup take more than S seconds",
     F(setup_timeout_s)},
    {"grace", "grace", RPX_OPT_DURATION, CLI | CMP, 0, 1e9, 0, NULL, "S", 2, "2", NULL, NULL,
     "after SIGINT/SIGTERM, wait S seconds for the call in progress, then kill the model's "
     "process; a second SIGINT kills it at once",
     F(grace_s)},
    {"call-records", "call_records", RPX_OPT_ENUM, RPX_OPT_INT_FIELD | CLI | MAN | PY, 0, 0, 0,
     call_records, "M",
     RPX_CALL_RECORDS_CPU, "cpu", "expected cpu, full or off", NULL,
     "where each timed call ran: cpu = its CPU at start and end (no system call) and each "
     "process's migrations, switches, faults and off-CPU time over its timed loop; full = those "
     "counters per call too (4 system calls, ~7 us a call, outside the timed span); off = nothing",
     F(call_records)},
    {"audit", "audit", RPX_OPT_STRING, CLI | MAN | PY, 0, 0, 0, NULL, "LIST", 0, NULL,
     "cache, seed or cache,seed", NULL,
     "cache: measure the target twice more, interleaved by process, every call on sample 0 "
     "against calls cycling through the distinct samples (or bodies), and say whether the "
     "repeated input is faster (MLPerf LoadGen TEST04); seed: measure it again with the "
     "sample-order/schedule seed + 1 and say whether the result moved (TEST05); the report's "
     "audit (docs/audits.md)",
     F(audit)},
    {"audit-threshold", "audit_threshold", RPX_OPT_FRACTION, CLI | MAN | PY, 0, 0.5, 1, NULL, "T",
     0.10,
     "10%", "10% or 0.1 (above 0, at most 50%)", NULL,
     "--audit cache: a repeated-input p50 faster than the distinct-input p50 by more than T is "
     "suspect",
     F(audit_threshold)},
    {"audit-seed-threshold", "audit_seed_threshold", RPX_OPT_FRACTION, CLI, 0, 0.5, 1, NULL, "T",
     0.05, "5%", "5% or 0.05 (above 0, at most 50%)", NULL,
     "--audit seed: a p50 that moves by more than T with another seed is suspect",
     F(audit_seed_threshold)},
    {"history", "history", RPX_OPT_STRING, CLI | MAN | PY | CMP, 0, 0, 0, NULL, "PATH", 0, NULL,
     "an SQLite file or postgresql://USER@HOST/DB", NULL,
     "record the session into this history: an SQLite file, or postgresql://... (also "
     "RPXPROF_HISTORY; docs/history.md); a history that cannot be written leaves the report "
     "written and exits 9",
     F(history)},
    {"timeline", "timeline", RPX_OPT_FLAG, RPX_OPT_INT_FIELD | CLI | PY, 0, 1, 0, NULL, NULL, 0, NULL,
     NULL,
     NULL,
     "keep when each process set up and tore down the model and when each call and input "
     "restore began, in the report's timeline (for rpxprof trace; implied by --trace)",
     F(timeline)},
    {"layers", "layers", RPX_OPT_INT, CLI, 1, RPX_LAYERS_MAX_CALLS, 0, NULL, "[N]", 0,
     NULL, NULL, "profiled calls per process",
     "after each process's timed calls (never during them), N profiled calls (--layers alone: "
     "20) through the runtime's own per-node profiler: each layer's time, cost and roofline "
     "bound in the report's layers (a model file's runtimes have one; docs/runtimes.md)",
     F(layers)},
    {"no-isolate", "no_isolate", RPX_OPT_FLAG, RPX_OPT_INVERT | RPX_OPT_INT_FIELD | CLI, 0, 1, 0,
     NULL,
     NULL, 1, NULL, NULL, NULL,
     "run the model in this process (for debuggers)",
     F(isolate), "processes=None"},
    {"no-cpu-probe", "no_cpu_probe", RPX_OPT_FLAG, RPX_OPT_INVERT | RPX_OPT_INT_FIELD | CLI, 0, 1,
     0,
     NULL, NULL, 1, NULL, NULL, NULL,
     "skip the cheap per-CPU speed probe before the run (about 2 ms per allowed CPU; the "
     "card's cpu_probe is then null)",
     F(cpu_probe)},
    {"check-outputs", "check_outputs", RPX_OPT_FLAG, RPX_OPT_INT_FIELD | CLI | MAN | PY, 0, 1, 0,
     NULL, NULL, 0,
     NULL, NULL, NULL,
     "an untimed reference pass over each distinct sample, then --check-fraction of the timed "
     "calls compared with it outside the timed span (docs/output-checks.md); a difference: "
     "status outputs_differ, exit 7. --check-outputs DIR (command line): against the outputs "
     "saved in DIR (--reference-outputs)",
     F(check_outputs)},
    {"check-fraction", "check_fraction", RPX_OPT_FRACTION, CLI | MAN | PY, 0, 1, 1, NULL, "P", 0.01,
     "1%",
     "a share above 0, at most 1 (1% or 0.01)", NULL,
     "the share of timed calls --check-outputs compares, drawn with the --seed value (default "
     "1); at least one per "
     "process",
     F(check_fraction)},
    {"rtol", "rtol", RPX_OPT_DOUBLE, CLI | MAN | PY, 0, 1e9, 0, NULL, "R", 0, NULL, NULL, NULL,
     "--check-outputs: equal when |out - ref| <= atol + rtol * |ref| (numpy's allclose); "
     "without --rtol/--atol outputs must be bit-exact",
     F(rtol)},
    {"atol", "atol", RPX_OPT_DOUBLE, CLI | MAN | PY, 0, 1e300, 0, NULL, "A", 0, NULL, NULL, NULL,
     "--check-outputs: the absolute tolerance beside --rtol",
     F(atol)},
    {"output-field", "output_field", RPX_OPT_STRING, RPX_OPT_HTTP | CLI | MAN | PY, 0, 0, 0, NULL,
     "PATH", 0, NULL,
     "a dotted path such as choices.0.text", NULL,
     "--check-outputs on an HTTP API: compare this JSON value of each response body (a dotted "
     "path, numbers index arrays) instead of the whole body",
     F(target.output_field)},
    {"save-outputs", "save_outputs", RPX_OPT_STRING, CLI | MAN | PY, 0, 0, 0, NULL, "DIR", 0, NULL,
     "a folder", NULL,
     "keep the reference pass's outputs as DIR/outputs-NNNNN.npz, one per distinct sample "
     "(implies --check-outputs)",
     F(save_outputs)},
    {"reference-outputs", "reference_outputs", RPX_OPT_STRING, CLI | MAN | PY, 0, 0, 0, NULL, "DIR",
     0, NULL,
     "a folder written by --save-outputs", NULL,
     "--check-outputs against the outputs another run saved with --save-outputs (another build,"
     " precision or machine) instead of this run's own reference pass",
     F(reference_outputs)},
    {"commit", "commit", RPX_OPT_STRING, CLI | MAN | PY | RPX_OPT_MANIFEST_MODEL, 0, 0, 0, NULL,
     "TEXT", 0, NULL, "a commit or version name",
     NULL,
     "the version under test's commit, recorded in the report's session.version (default: "
     "git rev-parse HEAD of the model's folder when it is a git checkout)",
     F(commit)},
};

#define N_TABLE (sizeof table / sizeof table[0])
_Static_assert(N_TABLE <= RPX_RUN_OPTIONS_MAX, "raise RPX_RUN_OPTIONS_MAX (runner.h)");

static const char *sp_(const char *name, rpx_option_spelling sp, char *buf, size_t size);

const rpx_run_option *rpx_run_options(size_t *n)
{
    if (n) *n = N_TABLE;
    return table;
}

const rpx_run_option *rpx_run_option_find(const char *name)
{
    size_t i;
    if (!name) return NULL;
    for (i = 0; i < N_TABLE; i++)
        if (strcmp(table[i].name, name) == 0 || strcmp(table[i].key, name) == 0) return &table[i];
    return NULL;
}

const char *rpx_run_option_spelled(const rpx_run_option *o, rpx_option_spelling sp, char *buf,
                                   size_t size)
{
    if (sp == RPX_SPELL_KEY) snprintf(buf, size, "%s", o->key);
    else if (sp == RPX_SPELL_PY && o->py_spelling) snprintf(buf, size, "%s", o->py_spelling);
    else if (sp == RPX_SPELL_PY) snprintf(buf, size, "%s=", o->key);
    else snprintf(buf, size, "--%s", o->name);
    return buf;
}

int rpx_run_option_accepted(const rpx_run_option *o, rpx_option_spelling sp)
{
    return o && (o->flags & RPX_OPT_IN(sp)) != 0;
}

static size_t index_of(const rpx_run_option *o)
{
    return o >= table && o < table + N_TABLE ? (size_t)(o - table) : (size_t)-1;
}

int rpx_run_option_given(const rpx_runner_config *c, const rpx_run_option *o)
{
    size_t i = index_of(o);
    return i < RPX_RUN_OPTIONS_MAX && c->given[i];
}

static void mark_given(rpx_runner_config *c, const rpx_run_option *o)
{
    size_t i = index_of(o);
    if (i < RPX_RUN_OPTIONS_MAX) c->given[i] = 1;
}

void rpx_run_option_range_text(const rpx_run_option *o, char *buf, size_t size)
{
    const char *what = o->kind == RPX_OPT_INT ? "a whole number"
                     : o->kind == RPX_OPT_DURATION ? "a number of seconds"
                                                   : "a number";
    size_t k;
    int n = 0;
    if (o->range) {
        n = snprintf(buf, size, "%s", o->range);
    } else if (o->kind == RPX_OPT_ENUM) {
        n = snprintf(buf, size, "expected");
        for (k = 0; o->choices[k] && n >= 0 && (size_t)n < size; k++)
            n += snprintf(buf + n, size - (size_t)n, "%s%s",
                          k == 0 ? " " : o->choices[k + 1] ? ", " : " or ", o->choices[k]);
    } else if (o->kind == RPX_OPT_INT && o->max < 1e15) {
        n = snprintf(buf, size, "%s from %.0f to %.0f", what, o->min_excluded ? o->min + 1 : o->min,
                     o->max);
    } else if (o->min_excluded) {
        n = snprintf(buf, size, "%s above %g", what, o->min);
    } else {
        n = snprintf(buf, size, "%s (%g or more)", what, o->min);
    }
    if (o->why && n >= 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, " (%s)", o->why);
}

/* "LABEL 'TEXT': give RANGE" (an enum: "LABEL 'TEXT': expected A or B") */
static int bad_value(const rpx_run_option *o, const char *label, const char *text, rpx_error *err)
{
    char range[400];
    rpx_run_option_range_text(o, range, sizeof range);
    if (o->kind == RPX_OPT_STRING)
        return rpx_error_set(err, RPX_EUSAGE, "%s is empty; give %s", label, range);
    if (o->kind != RPX_OPT_ENUM && o->kind != RPX_OPT_INT && text) { /* above the bound:
                                                                        name it */
        char *end;
        double v = strtod(text, &end);
        if (end != text && *end == '\0' && v > o->max) {
            char most[64];
            if (o->max < 1e15 && o->max == floor(o->max)) snprintf(most, sizeof most, "%.0f", o->max);
            else snprintf(most, sizeof most, "%g", o->max);
            return rpx_error_set(err, RPX_EUSAGE,
                                 "%s '%s': above the largest value it takes, %s; give %s", label,
                                 text, most, range);
        }
    }
    return rpx_error_set(err, RPX_EUSAGE, "%s '%s': %s%s", label, text,
                         o->kind == RPX_OPT_ENUM ? "" : "give ", range);
}

static void *field(rpx_runner_config *c, const rpx_run_option *o)
{
    return (char *)c + o->offset;
}

static int in_range(const rpx_run_option *o, double v)
{
    if (!isfinite(v) || v > o->max) return 0;
    if (o->min_excluded ? !(v > o->min) : !(v >= o->min)) return 0;
    return o->kind != RPX_OPT_INT || v == floor(v);
}

/* Store v (checked) into the field. */
static void store(rpx_runner_config *c, const rpx_run_option *o, double v)
{
    void *f = field(c, o);
    if (o->flags & RPX_OPT_ZERO_IS_NONE && v == 0) v = -1; /* 0 given: none, not the default */
    switch (o->kind) {
    case RPX_OPT_INT:
        if (o->flags & RPX_OPT_ULL) *(unsigned long long *)f = (unsigned long long)v;
        else if (o->flags & RPX_OPT_INT_FIELD) *(int *)f = (int)v;
        else *(long *)f = (long)v;
        break;
    case RPX_OPT_FLAG:
    case RPX_OPT_ENUM: *(int *)f = (int)v; break;
    default: *(double *)f = v; break;
    }
}

int rpx_run_option_set_number(rpx_runner_config *c, const rpx_run_option *o, double v,
                              const char *label, rpx_error *err)
{
    char text[64];
    if (o->kind == RPX_OPT_FLAG) {
        store(c, o, (o->flags & RPX_OPT_INVERT) ? !(v != 0) : v != 0);
        mark_given(c, o);
        return 0;
    }
    if (o->kind == RPX_OPT_STRING || o->kind == RPX_OPT_ENUM)
        return rpx_error_set(err, RPX_EINVAL, "%s: not a number option", label);
    snprintf(text, sizeof text, "%.17g", v);
    if (!in_range(o, v)) return bad_value(o, label, text, err);
    store(c, o, v);
    mark_given(c, o);
    return 0;
}

int rpx_run_option_set_text(rpx_runner_config *c, const rpx_run_option *o, const char *text,
                            const char *label, rpx_error *err)
{
    char *end, buf[64];
    double v;
    size_t k, n;
    switch (o->kind) {
    case RPX_OPT_FLAG: return rpx_run_option_set_number(c, o, 1, label, err);
    case RPX_OPT_STRING:
        if (!text || !*text) return bad_value(o, label, "", err);
        *(const char **)field(c, o) = text;
        mark_given(c, o);
        return 0;
    case RPX_OPT_ENUM:
        for (k = 0; text && o->choices[k]; k++)
            if (strcmp(o->choices[k], text) == 0) {
                if (o->flags & RPX_OPT_ENUM_TEXT) *(const char **)field(c, o) = o->choices[k];
                else store(c, o, (double)k);
                mark_given(c, o);
                return 0;
            }
        return bad_value(o, label, text ? text : "", err);
    case RPX_OPT_INT: {
        long l;
        if (!text || !*text) return bad_value(o, label, "", err);
        errno = 0;
        l = strtol(text, &end, 10);
        if (errno || *end || !in_range(o, (double)l)) return bad_value(o, label, text, err);
        store(c, o, (double)l);
        mark_given(c, o);
        return 0;
    }
    default:
        if (!text || !*text) return bad_value(o, label, "", err);
        n = strlen(text);
        /* a share may be given in percent: 1% */
        if (o->kind == RPX_OPT_FRACTION && n > 1 && text[n - 1] == '%') {
            if (n >= sizeof buf) return bad_value(o, label, text, err);
            snprintf(buf, sizeof buf, "%.*s", (int)(n - 1), text);
            errno = 0;
            v = strtod(buf, &end) / 100;
        } else {
            errno = 0;
            v = strtod(text, &end);
        }
        if (errno || *end || !in_range(o, v)) return bad_value(o, label, text, err);
        store(c, o, v);
        mark_given(c, o);
        return 0;
    }
}

double rpx_run_option_get(const rpx_runner_config *c, const rpx_run_option *o)
{
    const void *f = (const char *)c + o->offset;
    switch (o->kind) {
    case RPX_OPT_INT:
        if (o->flags & RPX_OPT_ULL) return (double)*(const unsigned long long *)f;
        if (o->flags & RPX_OPT_INT_FIELD) return *(const int *)f;
        return (double)*(const long *)f;
    case RPX_OPT_FLAG: {
        int v = *(const int *)f;
        return (o->flags & RPX_OPT_INVERT) ? !v : v != 0;
    }
    case RPX_OPT_ENUM:
        if (o->flags & RPX_OPT_ENUM_TEXT) {
            const char *s = *(const char *const *)f;
            size_t k;
            for (k = 0; s && o->choices[k]; k++)
                if (strcmp(o->choices[k], s) == 0) return (double)k;
            return s ? -1 : 0;
        }
        return *(const int *)f;
    case RPX_OPT_STRING: return *(const char *const *)f ? 1 : 0;
    default: return *(const double *)f;
    }
}

/* Defaults (rpx_runner_config_init calls it on a zeroed config). */
void rpx__run_options_defaults(rpx_runner_config *c)
{
    size_t i;
    for (i = 0; i < N_TABLE; i++) {
        const rpx_run_option *o = &table[i];
        if (o->kind == RPX_OPT_STRING || (o->flags & RPX_OPT_ENUM_TEXT)) {
            if (o->flags & RPX_OPT_TEXT_DEFAULT) *(const char **)field(c, o) = o->default_text;
        } else if (o->kind == RPX_OPT_FLAG) {
            *(int *)field(c, o) = (int)o->dflt; /* the field's own value (isolate: 1) */
        } else if (o->flags & RPX_OPT_ZERO_IS_NONE) { /* 0: the default, not "none" */
            if (o->kind == RPX_OPT_INT) *(long *)field(c, o) = (long)o->dflt;
            else *(double *)field(c, o) = o->dflt;
        } else {
            store(c, o, o->dflt);
        }
    }
}

/* How a bad value names the option: the spelled name, except from Python,
 * where a value is named by its key ("repeats '0': give ..."). */
const char *rpx__option_value_label(const char *name, rpx_option_spelling sp, char *buf,
                                    size_t size)
{
    return sp_(name, sp == RPX_SPELL_PY ? RPX_SPELL_KEY : sp, buf, size);
}

/* Whether a Python value is written as a str ("cpu", "MODEL.onnx"): it holds a
 * lowercase letter (a number, or a placeholder such as N, is written bare). */
static int py_str_value(const char *v)
{
    for (; *v; v++)
        if (*v >= 'a' && *v <= 'z') return 1;
    return 0;
}

const char *rpx__option_say(const char *name, const char *value, rpx_option_spelling sp,
                            char *buf, size_t size)
{
    char n[64];
    sp_(name, sp, n, sizeof n);
    if (!value) snprintf(buf, size, "%s", n);
    else if (sp == RPX_SPELL_PY) snprintf(buf, size, py_str_value(value) ? "%s\"%s\"" : "%s%s", n, value);
    else snprintf(buf, size, "%s %s", n, value);
    return buf;
}

/* One option's value in c, when it is not its default ("not given"). */
static int check_one(const rpx_runner_config *c, const rpx_run_option *o, rpx_option_spelling sp,
                     rpx_error *err)
{
    char name[64], text[64];
    const char *label = rpx__option_value_label(o->name, sp, name, sizeof name);
    const void *f = (const char *)c + o->offset;
    double v;
    if (o->kind == RPX_OPT_FLAG) return 0;
    if (o->kind == RPX_OPT_STRING) {
        const char *s = *(const char *const *)f;
        return s && !*s ? bad_value(o, label, "", err) : 0;
    }
    if (o->kind == RPX_OPT_ENUM) {
        if (o->flags & RPX_OPT_ENUM_TEXT) {
            const char *s = *(const char *const *)f;
            return s && rpx_run_option_get(c, o) < 0 ? bad_value(o, label, s, err) : 0;
        }
        v = rpx_run_option_get(c, o);
        if (v < 0 || v != floor(v)) goto bad;
        for (size_t k = 0; o->choices[k]; k++)
            if (k == (size_t)v) return 0;
        goto bad;
    }
    v = rpx_run_option_get(c, o);
    if (v == o->dflt || (isnan(v) && isnan(o->dflt))) return 0; /* not given */
    if (o->flags & RPX_OPT_ZERO_IS_NONE && v == -1) return 0;
    if (in_range(o, v)) return 0;
bad:
    snprintf(text, sizeof text, "%.17g", v);
    return bad_value(o, label, text, err);
}

/* --name, name or name= */
static const char *sp_(const char *name, rpx_option_spelling sp, char *buf, size_t size)
{
    const rpx_run_option *o = rpx_run_option_find(name);
    if (o) return rpx_run_option_spelled(o, sp, buf, size);
    snprintf(buf, size, sp == RPX_SPELL_KEY ? "%s" : sp == RPX_SPELL_PY ? "%s=" : "--%s", name);
    return buf;
}

/* --spread over n CPUs needs n calls at least (one process on each) */
static int spread_check(const rpx_runner_config *c, rpx_option_spelling sp, rpx_error *err)
{
    char a[40], b[40];
    int n = rpx__placement_spread_cpus(c);
    if (n > 0 && c->repeats < n)
        return rpx_error_set(err, RPX_EUSAGE, "%s over %d CPUs needs a process with a call on "
                             "each; give %s %d or more",
                             sp_("spread", sp, a, sizeof a), n,
                             sp_("repeats", sp, b, sizeof b), n);
    return 0;
}

/* --cpus's syntax and its CPUs among the allowed ones (refused with the
 * allowed list), --spread with isolation (placement.c's helpers) */
static int placement_check(const rpx_runner_config *c, rpx_option_spelling sp, rpx_error *err)
{
    cpu_set_t want, allowed, outside;
    char why[128], a[40], b[40], list[512], bad[512];
    if (c->spread && !c->isolate)
        return rpx_error_set(err, RPX_EUSAGE, "%s gives each worker process its own CPU and "
                             "needs isolation; drop %s",
                             sp_("spread", sp, a, sizeof a),
                             sp_("no-isolate", sp, b, sizeof b));
    if (!c->cpus) return spread_check(c, sp, err);
    if (rpx__cpus_parse(c->cpus, &want, why, sizeof why) != 0)
        return rpx_error_set(err, RPX_EUSAGE, "%s '%s': %s; give CPU numbers and ranges "
                             "separated by commas, such as 1, 2-3 or 0,2",
                             rpx__option_value_label("cpus", sp, a, sizeof a), c->cpus, why);
    if (rpx__cpus_allowed(&allowed) != 0)
        return spread_check(c, sp, err); /* nothing to check against: the kernel refuses */
    CPU_XOR(&outside, &want, &allowed);
    CPU_AND(&outside, &outside, &want);
    if (CPU_COUNT(&outside) > 0) {
        rpx__cpus_text(&allowed, list, sizeof list);
        rpx__cpus_text(&outside, bad, sizeof bad);
        return rpx_error_set(err, RPX_EUSAGE, "%s '%s': CPU %s %s not among the CPUs this "
                             "process may use (%s: its affinity, set by taskset, a cgroup "
                             "cpuset or the batch system); give CPUs from %s",
                             rpx__option_value_label("cpus", sp, a, sizeof a), c->cpus, bad,
                             CPU_COUNT(&outside) > 1 ? "are" : "is", list, list);
    }
    return spread_check(c, sp, err);
}

static int given(const rpx_runner_config *c, const char *name)
{
    return rpx_run_option_given(c, rpx_run_option_find(name));
}

/* Auto-ranging (--auto, autorange.c): --min-time within --max-time (or its
 * default), and no option that fixes the number of timed calls beside it. */
static int check_autorange(const rpx_runner_config *c, rpx_option_spelling sp, rpx_error *err)
{
    char a[40], b[40], d[40], e[40];
    const double max_time = c->max_time_s > 0 ? c->max_time_s : RPX_AUTORANGE_MAX_TIME_S;
    if (c->min_time_s > 0 && !c->autorange)
        return rpx_error_set(err, RPX_EUSAGE, "%s is auto-ranging's; add %s",
                             sp_("min-time", sp, a, sizeof a), sp_("auto", sp, b, sizeof b));
    if (!c->autorange) return 0;
    if (c->min_time_s > 0 && c->min_time_s > max_time)
        return rpx_error_set(err, RPX_EUSAGE, "%s %g s is more than %s %g s%s; give %s <= %s",
                             rpx__option_value_label("min-time", sp, a, sizeof a), c->min_time_s,
                             rpx__option_value_label("max-time", sp, b, sizeof b), max_time,
                             c->max_time_s > 0 ? "" : " (its default)",
                             sp_("min-time", sp, d, sizeof d), sp_("max-time", sp, e, sizeof e));
    if (c->rate_hz > 0)
        return rpx_error_set(err, RPX_EUSAGE, "%s paces a fixed number of calls and %s picks "
                             "the number; give one", sp_("rate", sp, a, sizeof a),
                             sp_("auto", sp, b, sizeof b));
    if (given(c, "repeats") || given(c, "duration"))
        return rpx_error_set(err, RPX_EUSAGE, "%s fixes the number of timed calls and %s picks "
                             "it; give one",
                             sp_(given(c, "repeats") ? "repeats" : "duration", sp, a, sizeof a),
                             sp_("auto", sp, b, sizeof b));
    return 0;
}

/* Isolation, processes, placement, --gpu-time, a local model's options on an API. */
static int check_processes(const rpx_runner_config *c, rpx_option_spelling sp, const rpx_kind *kind,
                           rpx_error *err)
{
    char a[80], b[40], d[40], e[40];
    int rc;
    if (!c->isolate && (c->timeout_s > 0 || c->call_timeout_s > 0 || c->setup_timeout_s > 0))
        return rpx_error_set(err, RPX_EUSAGE, "%s, %s and %s need isolation; drop %s",
                             sp_("timeout", sp, a, sizeof a), sp_("call-timeout", sp, b, sizeof b),
                             sp_("setup-timeout", sp, d, sizeof d),
                             sp_("no-isolate", sp, e, sizeof e));
    if (c->processes > 1 && !c->isolate)
        return rpx_error_set(err, RPX_EUSAGE, "%s %d needs isolation (each worker is a child "
                             "process); drop %s or give %s 1",
                             sp_("processes", sp, a, sizeof a), c->processes,
                             sp_("no-isolate", sp, b, sizeof b), a);
    if (c->processes > 1 && c->gpu_time)
        return rpx_error_set(err, RPX_EUSAGE, "%s traces the kernels of one process; give %s 1",
                             sp_("gpu-time", sp, a, sizeof a), sp_("processes", sp, b, sizeof b));
    if ((rc = placement_check(c, sp, err)) != 0) return rc;
    if ((rc = check_autorange(c, sp, err)) != 0) return rc;
    if (c->target_precision > 0 && !c->isolate && !c->autorange)
        return rpx_error_set(err, RPX_EUSAGE, "%s adds worker processes; drop %s",
                             sp_("target-precision", sp, a, sizeof a),
                             sp_("no-isolate", sp, b, sizeof b));
    if (c->gpu_time && (!c->device || strcmp(c->device, "cuda") != 0))
        return rpx_error_set(err, RPX_EUSAGE, "%s needs %s cuda (it traces GPU kernels)",
                             sp_("gpu-time", sp, a, sizeof a), sp_("device", sp, b, sizeof b));
    if (rpx__kind_has(kind, RPX_KIND_REMOTE)) {
        const char *local = c->cost ? "cost" : c->flops == c->flops ? "flops"
                          : c->params == c->params ? "params" : c->gpus ? "gpu"
                          : c->gpu_time ? "gpu-time" : NULL;
        if (local) sp_(local, sp, a, sizeof a);
        else if (c->device && strcmp(c->device, "cuda") == 0)
            snprintf(a, sizeof a, "%s cuda", sp_("device", sp, b, sizeof b)), local = a;
        if (local)
            return rpx_error_set(err, RPX_EUSAGE,
                                 "%s describes the model or the device it runs on, and an HTTP "
                                 "API's model runs remotely (remote API: not measured here); "
                                 "drop %s",
                                 a, a);
    }
    if (c->target.prompts_path && !c->target.body_template)
        return rpx_error_set(err, RPX_EUSAGE,
                             "%s gives the prompts for %s (each request's JSON body, its field "
                             "%s set to the next prompt); add %s",
                             sp_("prompts", sp, a, sizeof a), sp_("body-template", sp, b, sizeof b),
                             sp_("prompt-field", sp, d, sizeof d), b);
    return 0;
}

/* --max-time, an HTTP-only option on another target. */
static int check_given(const rpx_runner_config *c, rpx_option_spelling sp, const rpx_kind *kind,
                       rpx_error *err)
{
    char a[80], b[40];
    size_t i;
    if (given(c, "max-time") && !(c->target_precision > 0) && !c->autorange) {
        /* a front end without --target-precision (compare --run): --auto's bound */
        if (!rpx_run_option_accepted(rpx_run_option_find("target-precision"), sp))
            return rpx_error_set(err, RPX_EUSAGE, "%s is auto-ranging's; add %s",
                                 sp_("max-time", sp, a, sizeof a), sp_("auto", sp, b, sizeof b));
        return rpx_error_set(err, RPX_EUSAGE, "%s bounds %s; give both",
                             sp_("max-time", sp, a, sizeof a),
                             sp_("target-precision", sp, b, sizeof b));
    }
    for (i = 0; !rpx__kind_has(kind, RPX_KIND_RUNTIME) && c->model && i < N_TABLE; i++) {
        char *shown;
        int rc;
        if (!(table[i].flags & RPX_OPT_RUNTIME) || !c->given[i]) continue;
        shown = rpx_target_redact_spec(c->model);
        rc = rpx_error_set(err, RPX_EUSAGE, "%s is for model files run by a runtime%s, not %s",
                           rpx_run_option_spelled(&table[i], sp, a, sizeof a),
                           sp == RPX_SPELL_PY ? "" : " (model MODEL.onnx or MODEL.pt)",
                           shown ? shown : "this model");
        free(shown);
        return rc;
    }
    for (i = 0; !rpx__kind_has(kind, RPX_KIND_REQUESTS) && c->model && i < N_TABLE; i++) {
        char *shown;
        int rc;
        if (!(table[i].flags & RPX_OPT_HTTP) || !c->given[i]) continue;
        shown = rpx_target_redact_spec(c->model);
        rc = rpx_error_set(err, RPX_EUSAGE, "%s is for HTTP API targets%s, not %s",
                           rpx_run_option_spelled(&table[i], sp, a, sizeof a),
                           sp == RPX_SPELL_KEY  ? " (model http(s)://...)"
                           : sp == RPX_SPELL_PY ? ""
                                                : " (--model http(s)://...)",
                           shown ? shown : "this model");
        free(shown);
        return rc;
    }
    return 0;
}

/* --rate and --duration: a local target's paced calls (rate x duration timed
 * calls), or an HTTP API's open-loop load (rate x duration requests on a
 * schedule). The runner's own call sees the rewritten config (an API's rate in
 * target.load_rate, paced calls' duration turned into repeats). */
static int check_rate(const rpx_runner_config *c, rpx_option_spelling sp, const rpx_kind *kind,
                      rpx_error *err)
{
    char a[40], b[40], d[40], e[40];
    double rate = c->rate_hz > 0 ? c->rate_hz : c->target.load_rate;
    double duration = c->target.load_duration_s, n = rate * duration;
    const char *R = sp_("rate", sp, a, sizeof a), *D = sp_("duration", sp, b, sizeof b);
    const char *N = sp_("repeats", sp, d, sizeof d);
    const int own_load = rpx__kind_has(kind, RPX_KIND_OWN_LOAD);
    if (!own_load && duration > 0) {
        if (!(rate > 0))
            return rpx_error_set(err, RPX_EUSAGE, "%s S paces the calls for S seconds; give "
                                 "%s HZ too (HZ x S timed calls)", D, R);
        if (given(c, "repeats"))
            return rpx_error_set(err, RPX_EUSAGE, "%s and %s x %s both set the number of timed "
                                 "calls; give one", N, R, D);
        if (n < 0.5 || n >= (double)RPX_RUNNER_MAX_REPEATS + 0.5)
            return rpx_error_set(err, RPX_EUSAGE, "%s %g x %s %g = %.0f calls: give from 1 to "
                                 "%ld", R, rate, D, duration, n, (long)RPX_RUNNER_MAX_REPEATS);
    }
    if (!own_load || !(rate > 0 || given(c, "duration") || given(c, "arrivals") ||
                   given(c, "concurrency") || given(c, "seed") || given(c, "load-engine") ||
                   given(c, "drain")))
        return 0;
    if (!(rate > 0)) {
        char f[40], g[40], h[40], k[40];
        return rpx_error_set(err, RPX_EUSAGE, "%s, %s, %s, %s, %s and %s shape an open-loop "
                             "load; give %s too", sp_("arrivals", sp, e, sizeof e), D,
                             sp_("concurrency", sp, f, sizeof f), sp_("seed", sp, g, sizeof g),
                             sp_("drain", sp, h, sizeof h), sp_("load-engine", sp, k, sizeof k),
                             R);
    }
    if (!(duration > 0))
        return rpx_error_set(err, RPX_EUSAGE, "%s %g needs %s S (the schedule sends rate x "
                             "duration requests)", R, rate, D);
    if (given(c, "repeats"))
        return rpx_error_set(err, RPX_EUSAGE, "%s and %s both set the number of timed requests "
                             "(%s x %s); give one", N, R, R, D);
    if (n < 0.5 || n >= (double)RPX_RUNNER_MAX_REPEATS + 0.5)
        return rpx_error_set(err, RPX_EUSAGE, "%s %g x %s %g = %.0f requests: give from 1 to %ld",
                             R, rate, D, duration, n, (long)RPX_RUNNER_MAX_REPEATS);
    if (c->target_precision > 0 || c->processes > 1)
        return rpx_error_set(err, RPX_EUSAGE, "%s runs one schedule in one process; drop %s and "
                             "%s", R, sp_("processes", sp, e, sizeof e),
                             sp_("target-precision", sp, b, sizeof b));
    return 0;
}

/* The output checks, audits, a declared cost beside a graph. */
static int check_outputs_audits(const rpx_runner_config *c, rpx_option_spelling sp, const rpx_kind *kind,
                                rpx_error *err)
{
    char a[80], b[40];
    if (c->target.slo) {
        double ttft, tpot, e2e;
        rpx_error serr = {0};
        if (rpx_http_slo_parse(c->target.slo, &ttft, &tpot, &e2e, &serr) != 0)
            return rpx_error_set(err, RPX_EUSAGE, "%s", serr.message);
    }
    if ((c->rtol > 0 || c->atol > 0 || c->target.output_field || c->check_fraction != 0.01) &&
        !(c->check_outputs || c->save_outputs || c->reference_outputs)) {
        const char *which = c->rtol > 0 ? "rtol" : c->atol > 0 ? "atol"
                          : c->target.output_field ? "output-field" : "check-fraction";
        return rpx_error_set(err, RPX_EUSAGE, "%s compares outputs; add %s",
                             sp_(which, sp, a, sizeof a), sp_("check-outputs", sp, b, sizeof b));
    }
    if (c->save_outputs && c->reference_outputs)
        return rpx_error_set(err, RPX_EUSAGE,
                             "%s keeps this run's reference pass and %s replaces it; give one",
                             sp_("save-outputs", sp, a, sizeof a),
                             sp_("reference-outputs", sp, b, sizeof b));
    if (rpx__kind_has(kind, RPX_KIND_OWN_LOAD) && (c->target.load_rate > 0 || c->rate_hz > 0) &&
        (c->check_outputs || c->save_outputs || c->reference_outputs))
        return rpx_error_set(err, RPX_EUSAGE,
                             "%s: an open-loop load (%s on an HTTP API) has no calls of its own "
                             "to check; drop one of them",
                             sp_("check-outputs", sp, a, sizeof a), sp_("rate", sp, b, sizeof b));
    if (c->audit && rpx__audit_parse(c->audit, NULL) < 0)
        return rpx_error_set(err, RPX_EUSAGE, "%s '%s': expected cache, seed or cache,seed",
                             rpx__option_value_label("audit", sp, a, sizeof a), c->audit);
    if (c->audit && !c->isolate)
        return rpx_error_set(err, RPX_EUSAGE, "%s measures the target in interleaved worker "
                             "processes; drop %s", sp_("audit", sp, a, sizeof a),
                             sp_("no-isolate", sp, b, sizeof b));
    if (c->cost && (c->flops == c->flops || c->params == c->params)) {
        char d[40];
        return rpx_error_set(err, RPX_EUSAGE, "%s and %s/%s both describe the model's cost; give "
                             "one or the other",
                             sp_("cost", sp, a, sizeof a), sp_("flops", sp, b, sizeof b),
                             sp_("params", sp, d, sizeof d));
    }
    return 0;
}

/* --layers: a target whose hooks have a per-node profiler (a caller-made
 * target's own layers_begin, else its kind's RPX_KIND_LAYERS). */
static int check_layers(const rpx_runner_config *c, rpx_option_spelling sp, const rpx_kind *kind,
                        rpx_error *err)
{
    char a[40], list[256] = "";
    size_t n, i, at = 0;
    const rpx_kind *const *rows = rpx__kinds(&n);
    if (c->layers <= 0 || !kind) return 0;
    if (c->target.custom ? c->target.custom->layers_begin && c->target.custom->layers_end
                         : rpx__kind_has(kind, RPX_KIND_LAYERS))
        return 0;
    for (i = 0; i < n && at < sizeof list; i++)
        if (rpx__kind_has(rows[i], RPX_KIND_LAYERS))
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "",
                                   rows[i]->name);
    return rpx_error_set(err, RPX_EUSAGE,
                         "%s times each layer with the runtime's own per-node profiler, and a "
                         "%s target has none (its hooks have no layers_begin); the kinds that "
                         "have one: %s; drop %s",
                         sp_("layers", sp, a, sizeof a), kind->name,
                         list[0] ? list : "none in this build (a model file's, --model "
                                          "FILE.onnx, once its runtime is built)",
                         a);
}

int rpx_runner_config_check(const rpx_runner_config *c, rpx_option_spelling sp, rpx_error *err)
{
    size_t i;
    int rc;
    const rpx_kind *kind;
    for (i = 0; i < N_TABLE; i++)
        if ((rc = check_one(c, &table[i], sp, err)) != 0) return rc;
    kind = c->model || c->target.custom ? rpx__kind_of_target(c->model, &c->target) : NULL;
    if ((rc = check_processes(c, sp, kind, err)) != 0) return rc;
    if ((rc = check_outputs_audits(c, sp, kind, err)) != 0) return rc;
    if ((rc = check_given(c, sp, kind, err)) != 0) return rc;
    if ((rc = check_layers(c, sp, kind, err)) != 0) return rc;
    return check_rate(c, sp, kind, err);
}
