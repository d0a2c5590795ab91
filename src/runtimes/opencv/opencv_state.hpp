// opencv_state.hpp — the OpenCV DNN plugin's state, shared by its rooms:
// opencv_plugin.cpp (options, setup, the call, outputs, the runtime block,
// the C exports) and opencv_layers.cpp (per-layer times from
// Net::getPerfProfile and the ONNX nodes each layer covers).
#ifndef RPX_RUNTIMES_OPENCV_STATE_HPP
#define RPX_RUNTIMES_OPENCV_STATE_HPP

#include <string>
#include <vector>

#include <jansson.h>
#include <opencv2/dnn.hpp>

#include "../cxx/plugin_common.hpp"
#include "onnx_graph.hpp"

namespace rpx_cv {

struct input_bind {
    std::string name;
    int cv_type = 0;
    size_t index = 0;             // where it was among the inputs at setup
    std::vector<int> dims;
};

// One layer of the network as OpenCV runs it (ids 1.. of Net::getLayerNames).
struct layer_info {
    std::string name;             // the ONNX node's name where OpenCV's "onnx_node!" names one
    std::string op_type;          // the ONNX node's op type, else OpenCV's layer type
    bool known = false;           // name is a node of the file
    std::vector<std::string> covers; // the nodes fused into it (its own first)
};

struct state {
    rpx_rt::options opt;
    rpx_rt::onnx_graph graph;
    std::string display;          // the model file as given
    cv::dnn::Net net;
    std::vector<std::string> out_names;
    std::vector<cv::Mat> outs;
    std::vector<rpx_tensor> out_tensors;
    std::vector<input_bind> ins;
    json_t *settings = nullptr;
    double setup_ms = -1, read_ms = -1;
    bool set_up = false;
    // --layers
    std::vector<layer_info> layers;   // index i: layer id i + 1
    bool profiling = false;
    int profiled_calls = 0;
    json_t *events = nullptr;
    ~state()
    {
        json_decref(settings);
        json_decref(events);
    }
};

// The layer table: names, op types, and which layers OpenCV fused into which
// (a layer whose time is 0 after a forward did not run: its work is in the
// layer that absorbed it). Call after a forward; `timings` its perf profile.
void build_layer_table(state &s, const std::vector<double> &timings);
// After a profiled forward: one event per layer that ran.
int record_layers(state &s, rpx_error *err);

int layers_begin(void *st, rpx_error *err);
int layers_end(void *st, json_t **events, rpx_error *err);

} // namespace rpx_cv

#endif
