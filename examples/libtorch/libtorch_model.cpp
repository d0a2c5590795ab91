// libtorch_model.cpp — a real network profiled through libtorch (TorchScript).
//
// C++ inside, the C ABI of include/rpxprof/model.h outside:
//   setup:    torch::jit::load the TorchScript file (RPX_LIBTORCH_MODEL or
//             libtorch.conf) once, in eval mode, on the CPU or, with
//             --device cuda on a CUDA build of libtorch, on GPU 0
//   call:     rgb uint8 HxWx3 → float NCHW on the device (resize, /255, ImageNet
//             mean/std) → forward under InferenceMode → keep the output (the
//             first call checks it); rpxprof synchronises the GPU around the call
//   teardown: free the module
//
//   rpxprof run --model ./build/examples/librpx-libtorch.so:libtorch_predict --inputs frame.npz --cost net.onnx --output libtorch.json
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <torch/script.h>
#include <torch/torch.h>

#include "../common/example_config.hpp"
#include "rpxprof/model.h"

#define EXPORT __attribute__((visibility("default")))

namespace {

struct model {
    rpx_example::config cfg;
    torch::jit::script::Module module;
    torch::Device device = torch::kCPU;
    torch::Tensor mean, std, output;
    bool checked = false;
};

// The network's tensor: itself, "out" of a dict (torchvision segmentation), or the
// first element of a tuple or list.
torch::Tensor first_tensor(const c10::IValue &v)
{
    if (v.isTensor()) return v.toTensor();
    if (v.isGenericDict()) {
        auto d = v.toGenericDict();
        if (d.contains("out")) return first_tensor(d.at("out"));
        if (!d.empty()) return first_tensor(d.begin()->value());
    }
    if (v.isTuple() && !v.toTupleRef().elements().empty())
        return first_tensor(v.toTupleRef().elements()[0]);
    if (v.isList() && v.toListRef().size() > 0) return first_tensor(v.toListRef()[0]);
    return torch::Tensor();
}

} // namespace

extern "C" {

// extern: a namespace-scope const has internal linkage in C++
EXPORT extern const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;

EXPORT int libtorch_predict_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                                  rpx_error *err)
{
    std::string why;
    std::unique_ptr<model> m(new (std::nothrow) model);
    if (!m) return rpx_model_error(err, "out of memory");
    if (!rpx_example::rgb_input(in, "libtorch_predict", err)) {
        return -1;
    }
    if (!rpx_example::load("RPX_LIBTORCH", "libtorch", m->cfg, why)) {
        return rpx_model_error(err, "libtorch_predict: %s", why.c_str());
    }
    try {
        if (info && info->device && std::strcmp(info->device, "cuda") == 0) {
            if (!torch::cuda::is_available()) {
                return rpx_model_error(err, "libtorch_predict: --device cuda, but this libtorch "
                                            "has no CUDA (Debian's libtorch-dev is CPU-only; "
                                            "build against a CUDA libtorch) or sees no GPU");
            }
            m->device = torch::Device(torch::kCUDA, 0);
        }
        if (m->cfg.threads > 0) torch::set_num_threads(m->cfg.threads);
        m->module = torch::jit::load(m->cfg.model, m->device);
        m->module.eval();
        auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(m->device);
        m->mean = torch::tensor({0.485f, 0.456f, 0.406f}, opts).view({1, 3, 1, 1});
        m->std = torch::tensor({0.229f, 0.224f, 0.225f}, opts).view({1, 3, 1, 1});
    } catch (const std::exception &e) {
        std::string what = e.what();
        return rpx_model_error(err, "libtorch_predict: cannot load %s: %s", m->cfg.model.c_str(),
                               what.substr(0, what.find('\n')).c_str());
    }
    *state = m.release();
    return 0;
}

EXPORT int libtorch_predict(void *state, const rpx_inputs *in, rpx_error *err)
{
    model *m = static_cast<model *>(state);
    const rpx_tensor *t = rpx_example::rgb_input(in, "libtorch_predict", err);
    if (!t) return -1;
    try {
        c10::InferenceMode guard;
        // a view of rpxprof's read-only buffer: the first op below makes a new tensor
        torch::Tensor rgb = torch::from_blob(const_cast<void *>(t->data),
                                             {t->shape[0], t->shape[1], 3}, torch::kUInt8);
        torch::Tensor x = rgb.to(m->device).permute({2, 0, 1}).unsqueeze(0).to(torch::kFloat32)
                              .div_(255.0f);
        if (m->cfg.height && (m->cfg.height != t->shape[0] || m->cfg.width != t->shape[1]))
            x = torch::nn::functional::interpolate(
                x, torch::nn::functional::InterpolateFuncOptions()
                       .size(std::vector<int64_t>{m->cfg.height, m->cfg.width})
                       .mode(torch::kBilinear)
                       .align_corners(false));
        x = x.sub_(m->mean).div_(m->std);
        m->output = first_tensor(m->module.forward({x}));
    } catch (const std::exception &e) {
        std::string what = e.what();
        return rpx_model_error(err, "libtorch_predict: %s", what.substr(0, what.find('\n')).c_str());
    }
    if (!m->checked) {
        if (!m->output.defined())
            return rpx_model_error(err, "libtorch_predict: the network returned no tensor");
        torch::Tensor out = m->output.to(torch::kCPU, torch::kFloat32).contiguous();
        std::vector<int64_t> shape(out.sizes().begin(), out.sizes().end());
        std::string why = rpx_example::check_output(m->cfg, shape, out.data_ptr<float>(),
                                                    (size_t)out.numel());
        if (!why.empty()) return rpx_model_error(err, "libtorch_predict: %s", why.c_str());
        m->checked = true;
    }
    return 0;
}

EXPORT void libtorch_predict_teardown(void *state)
{
    delete static_cast<model *>(state);
}

} // extern "C"
