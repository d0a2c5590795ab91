// torch_layers.cpp — --layers for the libtorch plugin: libtorch's (legacy,
// CPU) profiler, torch::autograd::profiler::RecordProfile, on from
// layers_begin to layers_end, writing its Chrome trace into memory; each
// profiled call runs inside a user scope (kCallScope) and the ops run directly
// inside that scope — the top level of the call, never an op nested in another
// (aten::conv2d, not also the aten::convolution it calls) — are the events, so
// their times add up without counting any twice. A range whose name is no
// operator's (no "::": TorchScript's "forward" of the module and of each
// submodule) is a scope, not an op: the ops inside it are the call's. A TorchScript graph does not
// say which of its nodes an op came from: `nodes` is null, and the name is the
// op with its occurrence in the call ("aten::conv2d#3"), the same in every call.
#include <algorithm>
#include <map>

#include "torch_state.hpp"

namespace rpx_torch {

const char kCallScope[] = "rpxprof::call";

namespace {

struct span {
    std::string name;
    double ts, dur;               // µs
    long long tid;
};

long long tid_of(json_t *v)
{
    if (json_is_integer(v)) return json_integer_value(v);
    if (json_is_string(v)) return std::atoll(json_string_value(v));
    return -1;
}

} // namespace

int trace_events(const std::string &trace, json_t **events, rpx_error *err)
{
    json_error_t jerr;
    json_t *doc = json_loads(trace.c_str(), JSON_DISABLE_EOF_CHECK, &jerr);
    if (!json_is_array(doc)) {
        json_decref(doc);
        return rpx_rt::fail(err, RPX_EFORMAT, "the torch plugin: libtorch's profiler trace is not "
                            "a JSON array (line %d: %s)", jerr.line, jerr.text);
    }
    std::vector<span> calls, ops;
    size_t i;
    json_t *e;
    json_array_foreach(doc, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t *ts = json_object_get(e, "ts"), *dur = json_object_get(e, "dur");
        if (!name || !json_is_number(ts) || !json_is_number(dur)) continue;
        span s{name, json_number_value(ts), json_number_value(dur), tid_of(json_object_get(e, "tid"))};
        (s.name == kCallScope ? calls : ops).push_back(s);
    }
    json_decref(doc);
    auto earlier = [](const span &a, const span &b) {
        return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur; // a parent before its first child
    };
    std::sort(calls.begin(), calls.end(), earlier);
    std::sort(ops.begin(), ops.end(), earlier);
    json_t *out = json_array();
    for (size_t k = 0; k < calls.size(); k++) {
        const span &c = calls[k];
        double top_end = -1;
        std::map<std::string, int> seen;
        for (const span &o : ops) {
            if (o.tid != c.tid || o.ts < c.ts || o.ts + o.dur > c.ts + c.dur + 1e-3) continue;
            if (o.ts < top_end) continue;   // nested in the op before it
            if (o.name.find("::") == std::string::npos) continue; // a scope ("forward"): its ops count
            top_end = o.ts + o.dur;
            std::string row = o.name + "#" + std::to_string(seen[o.name]++);
            json_array_append_new(out, json_pack("{s:I, s:s, s:s, s:n, s:f}", "call",
                                                 (json_int_t)k, "name", row.c_str(), "op_type",
                                                 o.name.c_str(), "nodes", "time_ms", o.dur / 1e3));
        }
    }
    *events = out;
    return 0;
}

int layers_begin(void *st, rpx_error *err)
{
    state &s = *static_cast<state *>(st);
    try {
        s.trace.reset(new std::ostringstream);
        s.profile.reset(new torch::autograd::profiler::RecordProfile(*s.trace));
    } catch (const std::exception &e) {
        s.profile.reset();
        return rpx_rt::fail(err, RPX_EUNAVAILABLE, "the torch plugin: libtorch's profiler did not "
                            "start: %s", rpx_rt::first_lines(e.what(), 1).c_str());
    }
    s.profiling = true;
    return 0;
}

int layers_end(void *st, json_t **events, rpx_error *err)
{
    state &s = *static_cast<state *>(st);
    if (!s.profiling)
        return rpx_rt::fail(err, RPX_EINVAL, "the torch plugin: layers_end without layers_begin");
    s.profiling = false;
    try {
        s.profile.reset(); // writes the trace
    } catch (const std::exception &e) {
        return rpx_rt::fail(err, RPX_EUNAVAILABLE, "the torch plugin: libtorch's profiler failed "
                            "to write its trace: %s", rpx_rt::first_lines(e.what(), 1).c_str());
    }
    std::string trace = s.trace->str();
    s.trace.reset();
    return trace_events(trace, events, err);
}

} // namespace rpx_torch
