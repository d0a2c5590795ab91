// torch_state.hpp — the libtorch plugin's state, shared by its rooms:
// torch_plugin.cpp (options, setup, the call, outputs, the runtime block, the
// C exports) and torch_layers.cpp (libtorch's profiler around profiled calls).
#ifndef RPX_RUNTIMES_TORCH_STATE_HPP
#define RPX_RUNTIMES_TORCH_STATE_HPP

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <jansson.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/script.h>

#include "../cxx/plugin_common.hpp"

namespace rpx_torch {

// The scope each profiled call runs in, so that the trace says which ops were whose.
extern const char kCallScope[];

struct state {
    rpx_rt::options opt;
    std::string display;
    torch::jit::script::Module module;
    std::vector<size_t> order;    // forward's argument j is inputs[order[j]]
    bool by_name = false;         // matched by forward's argument names (else in order)
    std::vector<std::string> arg_names;
    std::vector<c10::IValue> args; // reused each call
    c10::IValue last;             // what the last call returned
    std::vector<torch::Tensor> out_kept;
    std::vector<std::string> out_names;
    std::vector<rpx_tensor> out_tensors;
    json_t *settings = nullptr, *inputs_json = nullptr;
    double setup_ms = -1;
    // --layers
    bool profiling = false;
    std::unique_ptr<std::ostringstream> trace;
    std::unique_ptr<torch::autograd::profiler::RecordProfile> profile;
    ~state()
    {
        json_decref(settings);
        json_decref(inputs_json);
    }
};

int layers_begin(void *st, rpx_error *err);
int layers_end(void *st, json_t **events, rpx_error *err);
// The events of a legacy-profiler trace (Chrome trace JSON): the ops run
// directly inside each kCallScope range, in order. Exposed for the parse alone.
int trace_events(const std::string &trace, json_t **events, rpx_error *err);

} // namespace rpx_torch

#endif
