// opencv_layers.cpp — --layers for the OpenCV DNN plugin: per-layer times
// from Net::getPerfProfile after each profiled forward, and the ONNX nodes a
// layer covers.
//
// What holds (docs/runtimes.md): OpenCV 4.6's ONNX importer names a layer
// "onnx_node!" + the node's name (or the node's first output when the node
// has none), so each layer is mapped back to its node. When OpenCV fuses a
// layer into the one before it (ReLU, BatchNorm, a Scale into a Convolution)
// the fused layer is skipped at run time and getPerfProfile gives it 0 ticks;
// such a layer is counted as covered by the layer that produced its input
// (the latest of its inputs when it has several, as OpenCV fuses into the
// layer computed last). The covering is thus read from OpenCV's own timings
// and graph, not from its private fusion flags. OpenCV may run one node as
// several layers (a Gemm as its InnerProduct and a layer named after the
// node's output): their times are summed into the node's one row.
#include <map>

#include "opencv_state.hpp"

namespace rpx_cv {

namespace {

const char kPrefix[] = "onnx_node!";

layer_info describe(const state &s, const cv::dnn::Net &net, int id, const std::string &cv_name)
{
    layer_info l;
    std::string n = cv_name.rfind(kPrefix, 0) == 0 ? cv_name.substr(sizeof kPrefix - 1) : cv_name;
    const rpx_rt::onnx_node *node = nullptr;
    auto by_name = s.graph.by_name.find(n);
    auto by_output = s.graph.by_output.find(n);
    if (by_name != s.graph.by_name.end()) node = &s.graph.nodes[by_name->second];
    else if (by_output != s.graph.by_output.end()) node = &s.graph.nodes[by_output->second];
    if (node) {
        l.name = node->name.empty() ? n : node->name;
        l.op_type = node->op_type;
        l.known = !node->name.empty();
    } else {
        l.name = cv_name;
        l.op_type = net.getLayer(id)->type;
    }
    return l;
}

} // namespace

void build_layer_table(state &s, const std::vector<double> &timings)
{
    std::vector<cv::String> names = s.net.getLayerNames();
    std::map<std::string, int> id_of;
    s.layers.clear();
    for (size_t i = 0; i < names.size(); i++) {
        int id = s.net.getLayerId(names[i]);
        id_of[names[i]] = id;
        s.layers.push_back(describe(s, s.net, id, names[i]));
    }
    // absorber[i]: the index of the layer that ran layer i's work
    std::vector<int> absorber(s.layers.size());
    for (size_t i = 0; i < s.layers.size(); i++) {
        absorber[i] = (int)i;
        if (i >= timings.size() || timings[i] > 0) continue;
        int best = -1;
        for (const cv::Ptr<cv::dnn::Layer> &in : s.net.getLayerInputs((int)i + 1)) {
            auto it = id_of.find(in->name);
            if (it != id_of.end() && it->second >= 1 && it->second - 1 < (int)i)
                best = std::max(best, it->second - 1);
        }
        if (best >= 0) absorber[i] = absorber[(size_t)best];
    }
    for (size_t i = 0; i < s.layers.size(); i++) {
        layer_info &owner = s.layers[(size_t)absorber[i]];
        if (s.layers[i].known) owner.covers.push_back(s.layers[i].name);
    }
}

int record_layers(state &s, rpx_error *err)
{
    std::map<std::string, json_t *> seen; // OpenCV may run one node as two layers: one row
    std::vector<double> t;
    s.net.getPerfProfile(t);
    const double ms_per_tick = 1e3 / cv::getTickFrequency();
    for (size_t i = 0; i < t.size() && i < s.layers.size(); i++) {
        if (t[i] <= 0) continue;  // fused into another layer: it did not run
        const layer_info &l = s.layers[i];
        auto again = seen.find(l.name);
        if (again != seen.end()) {
            json_t *time = json_object_get(again->second, "time_ms");
            json_real_set(time, json_real_value(time) + t[i] * ms_per_tick);
            continue;
        }
        json_t *nodes = json_null();
        // null: the row is the node of its name alone (the contract of layers_end)
        if (!l.known || l.covers.size() != 1 || l.covers[0] != l.name) {
            nodes = l.covers.empty() ? json_null() : json_array();
            for (const std::string &c : l.covers) json_array_append_new(nodes, json_string(c.c_str()));
        }
        json_t *e = json_pack("{s:i, s:s, s:s, s:o, s:f}", "call", s.profiled_calls, "name",
                              l.name.c_str(), "op_type", l.op_type.c_str(), "nodes", nodes,
                              "time_ms", t[i] * ms_per_tick);
        if (!e || json_array_append_new(s.events, e) != 0)
            return rpx_rt::fail(err, RPX_ENOMEM, "out of memory");
        seen[l.name] = e;
    }
    s.profiled_calls++;
    return 0;
}

int layers_begin(void *st, rpx_error *err)
{
    state &s = *static_cast<state *>(st);
    json_decref(s.events);
    if (!(s.events = json_array())) return rpx_rt::fail(err, RPX_ENOMEM, "out of memory");
    s.profiled_calls = 0;
    s.profiling = true;
    return 0;
}

int layers_end(void *st, json_t **events, rpx_error *err)
{
    state &s = *static_cast<state *>(st);
    s.profiling = false;
    if (!s.events) return rpx_rt::fail(err, RPX_EINVAL, "the opencv plugin: layers_end without "
                                       "layers_begin");
    *events = s.events;
    s.events = nullptr;
    return 0;
}

} // namespace rpx_cv
