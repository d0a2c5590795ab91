// opencv_plugin.cpp — librpxprof-opencv.so: an ONNX file run by OpenCV 4.6's
// DNN module (CPU backend), for the model_file kind (`--runtime opencv`).
// C++17 inside; outside, the plugin contract of src/loader/plugins.h:
// rpx_opencv_plugin_abi and rpx_opencv_plugin_open filling the target hooks
// (setup, call, outputs, section = the report's `runtime` block,
// layers_begin/layers_end in opencv_layers.cpp).
//
// Settings: threads → cv::setNumThreads; graph_opt none → Net::enableFusion
// (false), basic|extended|all → fusion on (OpenCV has that one switch);
// inter_threads does not apply (one graph runs at a time) and is recorded so;
// seed → cv::theRNG. Setup reads the file, configures the net and runs one
// forward with the setup inputs: OpenCV fuses and allocates in its first
// forward, so that is part of its setup, not of the first timed call.
#include <cstring>
#include <memory>
#include <new>

#include <opencv2/core/utils/logger.hpp>

#include "opencv_state.hpp"

using rpx_rt::fail;

namespace rpx_cv {

namespace {

const char kSuggest[] = "OpenCV 4.6's ONNX importer refuses some exports (an Identity node on an "
                        "initializer, Clip bounds given as inputs from opset 11): try --runtime "
                        "ort, or export as examples/export_model.py does";

int cv_type_of(rpx_dtype d)
{
    switch (d) {
    case RPX_DTYPE_FLOAT32: return CV_32F;
    case RPX_DTYPE_UINT8: return CV_8U;
    case RPX_DTYPE_INT8: return CV_8S;
    case RPX_DTYPE_INT32: return CV_32S;
    default: return -1;
    }
}

// The node OpenCV's exception names ("(onnx_node!Identity_0)"), or "".
std::string node_in(const std::string &what)
{
    size_t at = what.find("onnx_node!");
    if (at == std::string::npos) return "";
    at += std::strlen("onnx_node!");
    size_t end = what.find_first_of(")\n", at);
    return what.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

int cv_failure(const state &s, const char *doing, const cv::Exception &e, rpx_error *err)
{
    std::string what = rpx_rt::first_lines(e.what(), 2), node = node_in(e.what());
    return fail(err, RPX_EUNSUPPORTED, "the opencv runtime cannot %s %s%s%s%s: OpenCV says: %s; %s",
                doing, s.display.c_str(), node.empty() ? "" : " (at node '", node.c_str(),
                node.empty() ? "" : "')", what.c_str(), kSuggest);
}

// Bind every graph input to an array of the inputs by name, checking dtype and shape.
int bind_inputs(state &s, const rpx_inputs *in, rpx_error *err)
{
    std::string have;
    for (size_t i = 0; in && i < in->count; i++) have += (i ? ", " : "") + std::string(in->tensors[i].name);
    if (!s.graph.external.empty())
        return fail(err, RPX_EUNSUPPORTED, "%s keeps its weights in another file (external data, "
                    "e.g. '%s'), which OpenCV 4.6's importer cannot read: try --runtime ort",
                    s.display.c_str(), s.graph.external[0].c_str());
    for (const rpx_rt::onnx_value &v : s.graph.inputs) {
        const rpx_tensor *t = rpx_inputs_find(in, v.name.c_str());
        if (!t)
            return fail(err, RPX_EINVAL, "%s: the model's input '%s' is not among the inputs "
                        "(%s)%s", s.display.c_str(), v.name.c_str(), have.empty() ? "none" : have.c_str(),
                        s.graph.inputs.size() > 4 ? "; a file exported without its weights has "
                        "them as inputs (OpenCV 4.6 crashes on such a file): export with its "
                        "weights, or try --runtime ort" : "");
        const char *want = rpx_rt::onnx_dtype_name(v.elem_type);
        if (!want || std::strcmp(want, rpx_rt::dtype_name(t->dtype)) != 0)
            return fail(err, RPX_EINVAL, "%s: input '%s' is %s, the model wants %s",
                        s.display.c_str(), v.name.c_str(), rpx_rt::dtype_name(t->dtype),
                        want ? want : "a type rpxprof has no name for");
        bool fits = (size_t)t->ndim == v.dims.size();
        for (size_t d = 0; fits && d < v.dims.size(); d++)
            fits = v.dims[d] < 0 || v.dims[d] == t->shape[d];
        if (!fits)
            return fail(err, RPX_EINVAL, "%s: input '%s' has shape %s, the model wants %s (? is "
                        "any size)", s.display.c_str(), v.name.c_str(),
                        rpx_rt::shape_text(t->shape, t->ndim).c_str(),
                        rpx_rt::shape_text(v.dims.data(), (int)v.dims.size()).c_str());
        input_bind b;
        b.name = v.name;
        b.index = (size_t)(t - in->tensors);
        if ((b.cv_type = cv_type_of(t->dtype)) < 0)
            return fail(err, RPX_EUNSUPPORTED, "%s: input '%s' is %s, which OpenCV's DNN module "
                        "does not take (float32, uint8, int8, int32): try --runtime ort",
                        s.display.c_str(), v.name.c_str(), rpx_rt::dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++) b.dims.push_back((int)t->shape[d]);
        s.ins.push_back(b);
    }
    for (size_t i = 0; in && i < in->count; i++) {
        bool used = false;
        for (const input_bind &b : s.ins) used = used || b.name == in->tensors[i].name;
        if (!used)
            return fail(err, RPX_EINVAL, "%s has no input '%s' (its inputs: %zu named in the "
                        "file); rename or drop that array", s.display.c_str(),
                        in->tensors[i].name, s.graph.inputs.size());
    }
    return 0;
}

void set_inputs(state &s, const rpx_inputs *in)
{
    for (const input_bind &b : s.ins) {
        const rpx_tensor *t = b.index < in->count && std::strcmp(in->tensors[b.index].name,
                              b.name.c_str()) == 0 ? &in->tensors[b.index]
                              : rpx_inputs_find(in, b.name.c_str());
        // a view of rpxprof's read-only buffer: setInput copies it into the net
        cv::Mat m((int)b.dims.size(), b.dims.data(), b.cv_type, const_cast<void *>(t->data));
        s.net.setInput(m, b.name);
    }
}

void configure(state &s)
{
    json_t *set = json_object();
    if (s.opt.has_threads && s.opt.threads > 0) cv::setNumThreads((int)s.opt.threads);
    json_object_set_new(set, "threads", json_integer(cv::getNumThreads()));
    json_object_set_new(set, "threads_requested", s.opt.has_threads && s.opt.threads > 0
                        ? json_integer(s.opt.threads) : json_null());
    json_object_set_new(set, "inter_threads", json_null());
    json_object_set_new(set, "inter_threads_note", json_string(
        s.opt.has_inter_threads && s.opt.inter_threads > 0
            ? "not applicable: OpenCV DNN runs one graph at a time; the value was not used"
            : "not applicable: OpenCV DNN runs one graph at a time"));
    bool fusion = !(s.opt.has_graph_opt && s.opt.graph_opt == "none");
    s.net.enableFusion(fusion);
    json_object_set_new(set, "graph_opt", s.opt.has_graph_opt ? json_string(s.opt.graph_opt.c_str())
                                                              : json_null());
    json_object_set_new(set, "fusion", json_boolean(fusion));
    json_object_set_new(set, "graph_opt_note", json_string(
        "OpenCV has one switch: none turns layer fusion off, basic|extended|all leave it on"));
    if (s.opt.has_seed) cv::theRNG().state = (uint64_t)s.opt.seed;
    json_object_set_new(set, "seed", s.opt.has_seed ? json_integer(s.opt.seed) : json_null());
    json_object_set_new(set, "backend", json_string("DNN_BACKEND_OPENCV"));
    json_object_set_new(set, "target", json_string("DNN_TARGET_CPU"));
    json_object_set_new(set, "setup_includes_first_forward", json_true());
    s.settings = set;
}

int setup(void **st, const rpx_inputs *in, const rpx_run_info *info, rpx_error *err)
{
    state &s = *static_cast<state *>(*st);
    if (info && info->device && std::strcmp(info->device, "cpu") != 0)
        return fail(err, RPX_EUNSUPPORTED, "the opencv runtime runs OpenCV's CPU backend; "
                    "profile it with --device cpu");
    int rc = bind_inputs(s, in, err);
    if (rc != 0) return rc;
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    double t0 = rpx_rt::now_ms();
    try {
        s.net = cv::dnn::readNetFromONNX(s.opt.model);
    } catch (const cv::Exception &e) {
        return cv_failure(s, "read", e, err);
    }
    if (s.net.empty())
        return fail(err, RPX_EUNSUPPORTED, "the opencv runtime read no network from %s; try "
                    "--runtime ort", s.display.c_str());
    s.read_ms = rpx_rt::now_ms() - t0;
    try {
        configure(s);
        s.net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        s.net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        for (const cv::String &n : s.net.getUnconnectedOutLayersNames()) s.out_names.push_back(n);
        set_inputs(s, in);
        s.net.forward(s.outs, s.out_names);
    } catch (const cv::Exception &e) {
        return cv_failure(s, "set up", e, err);
    }
    s.setup_ms = rpx_rt::now_ms() - t0;
    std::vector<double> timings;
    s.net.getPerfProfile(timings);
    build_layer_table(s, timings);
    s.set_up = true;
    return 0;
}

int call(void *st, const rpx_inputs *in, rpx_error *err)
{
    state &s = *static_cast<state *>(st);
    try {
        set_inputs(s, in);
        s.net.forward(s.outs, s.out_names);
    } catch (const cv::Exception &e) {
        return fail(err, RPX_EMODEL, "the opencv runtime failed in a forward of %s: %s",
                    s.display.c_str(), rpx_rt::first_lines(e.what(), 2).c_str());
    }
    return s.profiling ? record_layers(s, err) : 0;
}

int outputs(void *st, rpx_outputs *out, rpx_error *err)
{
    state &s = *static_cast<state *>(st);
    s.out_tensors.assign(s.outs.size(), rpx_tensor());
    for (size_t i = 0; i < s.outs.size(); i++) {
        const cv::Mat &m = s.outs[i];
        rpx_tensor &t = s.out_tensors[i];
        if (m.depth() != CV_32F || !m.isContinuous() || m.dims > RPX_MAX_DIMS)
            return fail(err, RPX_EUNSUPPORTED, "the opencv runtime's output '%s' is not a "
                        "contiguous float32 array", s.out_names[i].c_str());
        t.name = s.out_names[i].c_str();
        t.dtype = RPX_DTYPE_FLOAT32;
        t.ndim = m.dims;
        for (int d = 0; d < m.dims; d++) t.shape[d] = m.size[d];
        t.count = m.total();
        t.nbytes = t.count * sizeof(float);
        t.data = m.data;
    }
    out->count = s.out_tensors.size();
    out->tensors = s.out_tensors.data();
    return 0;
}

json_t *section(void *st)
{
    state &s = *static_cast<state *>(st);
    // the library holding OpenCV's DNN module, found from one of its functions
    cv::dnn::Net (*read)(const cv::String &) = &cv::dnn::readNetFromONNX;
    std::string lib = rpx_rt::library_of(reinterpret_cast<const void *>(read));
    std::string lib_sha = lib.empty() ? "" : rpx_rt::file_sha256(lib);
    std::string model_sha = rpx_rt::file_sha256(s.opt.model);
    json_t *ins = json_array(), *outs = json_array();
    for (const rpx_rt::onnx_value &v : s.graph.inputs)
        json_array_append_new(ins, rpx_rt::tensor_json(v.name, rpx_rt::onnx_dtype_name(v.elem_type),
                                                       v.dims));
    for (size_t i = 0; i < s.out_names.size(); i++) {
        std::vector<int64_t> shape;
        const cv::Mat *m = i < s.outs.size() ? &s.outs[i] : nullptr;
        for (int d = 0; m && d < m->dims; d++) shape.push_back(m->size[d]);
        json_array_append_new(outs, rpx_rt::tensor_json(s.out_names[i], m && m->depth() == CV_32F
                                                        ? "float32" : nullptr, shape));
    }
    std::string provider = "OpenCV DNN CPU (DNN_BACKEND_OPENCV, DNN_TARGET_CPU)";
    return json_pack("{s:s, s:s, s:o, s:o, s:s, s:O, s:o, s:o, s:s, s:o, s:o, s:o}",
                     "name", "opencv", "version", CV_VERSION,
                     "library", lib.empty() ? json_null() : json_string(lib.c_str()),
                     "library_sha256", lib_sha.empty() ? json_null() : json_string(lib_sha.c_str()),
                     "provider", provider.c_str(),
                     "settings", s.settings ? s.settings : json_null(),
                     "setup_ms", s.setup_ms >= 0 ? json_real(s.setup_ms) : json_null(),
                     "read_ms", s.read_ms >= 0 ? json_real(s.read_ms) : json_null(),
                     "model", s.opt.model.c_str(),
                     "model_sha256", model_sha.empty() ? json_null() : json_string(model_sha.c_str()),
                     "inputs", ins, "outputs", outs);
}

void unload(void *st) { delete static_cast<state *>(st); }

} // namespace

} // namespace rpx_cv

extern "C" {

RPX_PLUGIN_EXPORT extern const int rpx_opencv_plugin_abi = RPX_PLUGIN_ABI;

RPX_PLUGIN_EXPORT int rpx_opencv_plugin_open(rpx_target *t, const rpx_kv_list *opts,
                                             rpx_error *err);
int rpx_opencv_plugin_open(rpx_target *t, const rpx_kv_list *opts, rpx_error *err)
{
    using namespace rpx_cv;
    std::unique_ptr<state> s(new (std::nothrow) state);
    if (!s) return fail(err, RPX_ENOMEM, "out of memory");
    try {
        int rc = rpx_rt::read_options(opts, "opencv", s->opt, err);
        if (rc != 0) return rc;
        s->display = s->opt.model;
        std::string why;
        if (rpx_rt::read_onnx_graph(s->opt.model, s->graph, why) != 0)
            return fail(err, RPX_EFORMAT, "--model %s %s", s->display.c_str(), why.c_str());
    } catch (const std::exception &e) {
        return fail(err, RPX_ENOMEM, "the opencv plugin: %s", e.what());
    }
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
