// torch_plugin.cpp — librpxprof-torch.so: a TorchScript file (.pt, saved by
// torch.jit.trace or torch.jit.script) run by libtorch on the CPU, for the
// model_file kind (`--runtime torch`). C++17 inside; outside, the plugin
// contract of src/loader/plugins.h: rpx_torch_plugin_abi and
// rpx_torch_plugin_open filling the target hooks (setup, call, outputs,
// section = the report's `runtime` block, layers_begin/layers_end in
// torch_layers.cpp).
//
// Inputs: by the names of forward's arguments when every array's name is one
// of them, else in the inputs file's order. Settings: threads →
// at::set_num_threads, inter_threads → at::set_num_interop_threads,
// graph_opt none → the graph executor's optimisation off (basic|extended|all:
// on, libtorch has that one switch), seed → torch::manual_seed. Calls run in
// eval mode under c10::InferenceMode. Outputs: every tensor of what forward
// returns (a tuple or list flattened in order, a dict by its keys): "output"
// when it is one tensor, else "output0", "output1", ...
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include <unistd.h>

#include <ATen/Parallel.h>
#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>

#include "torch_state.hpp"

using rpx_rt::fail;

namespace rpx_torch {

namespace {

bool scalar_of(rpx_dtype d, c10::ScalarType &out)
{
    switch (d) {
    case RPX_DTYPE_BOOL: out = c10::kBool; return true;
    case RPX_DTYPE_INT8: out = c10::kChar; return true;
    case RPX_DTYPE_INT16: out = c10::kShort; return true;
    case RPX_DTYPE_INT32: out = c10::kInt; return true;
    case RPX_DTYPE_INT64: out = c10::kLong; return true;
    case RPX_DTYPE_UINT8: out = c10::kByte; return true;
    case RPX_DTYPE_FLOAT16: out = c10::kHalf; return true;
    case RPX_DTYPE_FLOAT32: out = c10::kFloat; return true;
    case RPX_DTYPE_FLOAT64: out = c10::kDouble; return true;
    default: return false;
    }
}

bool dtype_of(c10::ScalarType t, rpx_dtype &out)
{
    static const rpx_dtype all[] = {RPX_DTYPE_BOOL, RPX_DTYPE_INT8, RPX_DTYPE_INT16,
                                    RPX_DTYPE_INT32, RPX_DTYPE_INT64, RPX_DTYPE_UINT8,
                                    RPX_DTYPE_FLOAT16, RPX_DTYPE_FLOAT32, RPX_DTYPE_FLOAT64};
    c10::ScalarType s;
    for (rpx_dtype d : all)
        if (scalar_of(d, s) && s == t) { out = d; return true; }
    return false;
}

std::string short_what(const std::exception &e) { return rpx_rt::first_lines(e.what(), 2); }

// Match the arrays to forward's arguments (after self): by name, else in order.
int bind_inputs(state &s, const rpx_inputs *in, rpx_error *err)
{
    const c10::FunctionSchema &schema = s.module.get_method("forward").function().getSchema();
    for (size_t j = 1; j < schema.arguments().size(); j++)
        s.arg_names.push_back(schema.arguments()[j].name());
    size_t n = in ? in->count : 0;
    std::string have, want;
    for (size_t i = 0; i < n; i++) have += (i ? ", " : "") + std::string(in->tensors[i].name);
    for (size_t j = 0; j < s.arg_names.size(); j++) want += (j ? ", " : "") + s.arg_names[j];
    if (n != s.arg_names.size())
        return fail(err, RPX_EINVAL, "%s: forward takes %zu input%s (%s), the inputs hold %zu (%s)",
                    s.display.c_str(), s.arg_names.size(), s.arg_names.size() == 1 ? "" : "s",
                    want.c_str(), n, have.empty() ? "none" : have.c_str());
    s.by_name = true;
    for (const std::string &a : s.arg_names) {
        const rpx_tensor *t = rpx_inputs_find(in, a.c_str());
        if (!t) { s.by_name = false; break; }
        s.order.push_back((size_t)(t - in->tensors));
    }
    if (!s.by_name) {
        s.order.clear();
        for (size_t i = 0; i < n; i++) s.order.push_back(i);
    }
    s.inputs_json = json_array();
    for (size_t j = 0; j < n; j++) {
        const rpx_tensor &t = in->tensors[s.order[j]];
        c10::ScalarType st;
        if (!scalar_of(t.dtype, st))
            return fail(err, RPX_EUNSUPPORTED, "%s: input '%s' is %s, which libtorch 1.13 has no "
                        "tensor type for", s.display.c_str(), t.name, rpx_rt::dtype_name(t.dtype));
        json_array_append_new(s.inputs_json, rpx_rt::tensor_json(
            s.arg_names[j], rpx_rt::dtype_name(t.dtype),
            std::vector<int64_t>(t.shape, t.shape + t.ndim)));
    }
    s.args.resize(n);
    return 0;
}

void make_args(state &s, const rpx_inputs *in)
{
    for (size_t j = 0; j < s.order.size(); j++) {
        const rpx_tensor &t = in->tensors[s.order[j]];
        c10::ScalarType st = c10::kFloat;
        scalar_of(t.dtype, st);
        // a view of rpxprof's read-only buffer (no copy): the network must not write its inputs
        s.args[j] = torch::from_blob(const_cast<void *>(t.data),
                                     c10::IntArrayRef(t.shape, (size_t)t.ndim),
                                     torch::TensorOptions().dtype(st));
    }
}

int configure(state &s, rpx_error *err)
{
    json_t *set = json_object();
    s.settings = set;
    try {
        if (s.opt.has_threads && s.opt.threads > 0) at::set_num_threads((int)s.opt.threads);
        if (s.opt.has_inter_threads && s.opt.inter_threads > 0)
            at::set_num_interop_threads((int)s.opt.inter_threads);
    } catch (const std::exception &e) {
        return fail(err, RPX_EINVAL, "the torch runtime refused the thread counts: %s",
                    short_what(e).c_str());
    }
    bool optimize = !(s.opt.has_graph_opt && s.opt.graph_opt == "none");
    torch::jit::setGraphExecutorOptimize(optimize);
    if (s.opt.has_seed) torch::manual_seed((uint64_t)s.opt.seed);
    json_object_set_new(set, "threads", json_integer(at::get_num_threads()));
    json_object_set_new(set, "threads_requested", s.opt.has_threads && s.opt.threads > 0
                        ? json_integer(s.opt.threads) : json_null());
    json_object_set_new(set, "inter_threads", json_integer(at::get_num_interop_threads()));
    json_object_set_new(set, "inter_threads_requested",
                        s.opt.has_inter_threads && s.opt.inter_threads > 0
                            ? json_integer(s.opt.inter_threads) : json_null());
    json_object_set_new(set, "graph_opt", s.opt.has_graph_opt ? json_string(s.opt.graph_opt.c_str())
                                                              : json_null());
    json_object_set_new(set, "graph_executor_optimize", json_boolean(optimize));
    json_object_set_new(set, "graph_opt_note", json_string(
        "libtorch has one switch: none turns the graph executor's optimisation off, "
        "basic|extended|all leave it on"));
    json_object_set_new(set, "seed", s.opt.has_seed ? json_integer(s.opt.seed) : json_null());
    json_object_set_new(set, "mode", json_string("eval, c10::InferenceMode"));
    json_object_set_new(set, "inputs_matched", json_string("")); // set after the binding
    return 0;
}

int setup(void **st, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    state &s = *static_cast<state *>(*st);
    if (info && info->device && std::strcmp(info->device, "cpu") != 0)
        return fail(err, RPX_EUNSUPPORTED, "the torch runtime runs on the CPU (Debian's "
                    "libtorch-dev has no CUDA); profile it with --device cpu");
    int rc = configure(s, err);
    if (rc != 0) return rc;
    double t0 = rpx_rt::now_ms();
    try {
        s.module = torch::jit::load(s.opt.model, torch::kCPU);
        s.module.eval();
    } catch (const std::exception &e) {
        return fail(err, RPX_EUNSUPPORTED, "the torch runtime cannot load %s: libtorch says: %s; "
                    "a .pt must be TorchScript (torch.jit.trace or torch.jit.script, then "
                    ".save); an ONNX file runs with --runtime ort or --runtime opencv",
                    s.display.c_str(), short_what(e).c_str());
    }
    s.setup_ms = rpx_rt::now_ms() - t0;
    try {
        if ((rc = bind_inputs(s, in, err)) != 0) return rc;
    } catch (const std::exception &e) {
        return fail(err, RPX_EUNSUPPORTED, "%s has no forward method libtorch can call: %s",
                    s.display.c_str(), short_what(e).c_str());
    }
    json_object_set_new(s.settings, "inputs_matched", json_string(
        s.by_name ? "by forward's argument names" : "in the inputs file's order"));
    return 0;
}

int call(void *st, const rpx_inputs *in, rpx_error *err)
{
    state &s = *static_cast<state *>(st);
    try {
        c10::InferenceMode guard;
        make_args(s, in);
        if (s.profiling) {
            RECORD_USER_SCOPE(kCallScope);
            s.last = s.module.forward(s.args);
        } else {
            s.last = s.module.forward(s.args);
        }
    } catch (const std::exception &e) {
        return fail(err, RPX_EMODEL, "the torch runtime failed in forward of %s: %s",
                    s.display.c_str(), short_what(e).c_str());
    }
    return 0;
}

void flatten(const c10::IValue &v, const std::string &key, std::vector<torch::Tensor> &out,
             std::vector<std::string> &names)
{
    if (v.isTensor()) {
        out.push_back(v.toTensor());
        names.push_back(key);
    } else if (v.isTuple()) {
        for (const c10::IValue &e : v.toTupleRef().elements()) flatten(e, "", out, names);
    } else if (v.isList()) {
        for (const c10::IValue &e : v.toListRef()) flatten(e, "", out, names);
    } else if (v.isGenericDict()) {
        for (const auto &kv : v.toGenericDict())
            flatten(kv.value(), kv.key().isString() ? kv.key().toStringRef() : "", out, names);
    }
}

void collect(state &s)
{
    std::vector<torch::Tensor> all;
    std::vector<std::string> keys;
    flatten(s.last, "", all, keys);
    s.out_kept.clear();
    s.out_names.clear();
    for (size_t i = 0; i < all.size(); i++) {
        s.out_kept.push_back(all[i].contiguous());
        s.out_names.push_back(!keys[i].empty() ? keys[i] : all.size() == 1 ? "output"
                              : "output" + std::to_string(i));
    }
}

int outputs(void *st, rpx_outputs *out, rpx_error *err)
{
    state &s = *static_cast<state *>(st);
    try {
        c10::InferenceMode guard;
        collect(s);
    } catch (const std::exception &e) {
        return fail(err, RPX_EMODEL, "the torch runtime: the outputs: %s", short_what(e).c_str());
    }
    s.out_tensors.assign(s.out_kept.size(), rpx_tensor());
    for (size_t i = 0; i < s.out_kept.size(); i++) {
        const torch::Tensor &t = s.out_kept[i];
        rpx_tensor &r = s.out_tensors[i];
        if (!dtype_of(t.scalar_type(), r.dtype) || t.dim() > RPX_MAX_DIMS)
            return fail(err, RPX_EUNSUPPORTED, "the torch runtime's output '%s' is %s, which "
                        "rpxprof cannot compare", s.out_names[i].c_str(),
                        c10::toString(t.scalar_type()));
        r.name = s.out_names[i].c_str();
        r.ndim = (int)t.dim();
        for (int d = 0; d < r.ndim; d++) r.shape[d] = t.size(d);
        r.count = (size_t)t.numel();
        r.nbytes = r.count * t.element_size();
        r.data = t.data_ptr();
    }
    out->count = s.out_tensors.size();
    out->tensors = s.out_tensors.data();
    return 0;
}

json_t *section(void *st)
{
    state &s = *static_cast<state *>(st);
    std::string lib = rpx_rt::library_of(reinterpret_cast<const void *>(&at::get_num_threads));
    std::string lib_sha = lib.empty() ? "" : rpx_rt::file_sha256(lib);
    std::string model_sha = rpx_rt::file_sha256(s.opt.model);
    json_t *outs = json_array();
    try {
        c10::InferenceMode guard;
        collect(s);
    } catch (const std::exception &) {
        s.out_kept.clear();
    }
    for (size_t i = 0; i < s.out_kept.size(); i++) {
        rpx_dtype d;
        const torch::Tensor &t = s.out_kept[i];
        json_array_append_new(outs, rpx_rt::tensor_json(
            s.out_names[i], dtype_of(t.scalar_type(), d) ? rpx_rt::dtype_name(d) : nullptr,
            std::vector<int64_t>(t.sizes().begin(), t.sizes().end())));
    }
    return json_pack("{s:s, s:s, s:o, s:o, s:s, s:O, s:o, s:s, s:o, s:O, s:o}",
                     "name", "torch", "version", TORCH_VERSION,
                     "library", lib.empty() ? json_null() : json_string(lib.c_str()),
                     "library_sha256", lib_sha.empty() ? json_null() : json_string(lib_sha.c_str()),
                     "provider", "CPU", "settings", s.settings ? s.settings : json_null(),
                     "setup_ms", s.setup_ms >= 0 ? json_real(s.setup_ms) : json_null(),
                     "model", s.opt.model.c_str(),
                     "model_sha256", model_sha.empty() ? json_null() : json_string(model_sha.c_str()),
                     "inputs", s.inputs_json ? s.inputs_json : json_null(), "outputs", outs);
}

void unload(void *st) { delete static_cast<state *>(st); }

} // namespace

} // namespace rpx_torch

extern "C" {

RPX_PLUGIN_EXPORT extern const int rpx_torch_plugin_abi = RPX_PLUGIN_ABI;

RPX_PLUGIN_EXPORT int rpx_torch_plugin_open(rpx_target *t, const rpx_kv_list *opts,
                                            rpx_error *err);
int rpx_torch_plugin_open(rpx_target *t, const rpx_kv_list *opts, rpx_error *err)
{
    using namespace rpx_torch;
    std::unique_ptr<state> s(new (std::nothrow) state);
    if (!s) return fail(err, RPX_ENOMEM, "out of memory");
    int rc = rpx_rt::read_options(opts, "torch", s->opt, err);
    if (rc != 0) return rc;
    s->display = s->opt.model;
    if (access(s->opt.model.c_str(), R_OK) != 0)
        return fail(err, RPX_ENOTFOUND, "--model %s cannot be read: %s", s->display.c_str(),
                    std::strerror(errno));
    t->hooks.state = s.release();
    t->hooks.unload = unload;
    t->hooks.setup = setup;
    t->hooks.call = call;
    t->hooks.outputs = outputs;
    t->hooks.section = section;
    t->hooks.layers_begin = layers_begin;
    t->hooks.layers_end = layers_end;
    return 0;
}

} // extern "C"
