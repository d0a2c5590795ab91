// opencv_dnn_model.cpp — a real network profiled through OpenCV's DNN module.
//
// C++ inside, the C ABI of include/rpxprof/model.h outside:
//   setup:    read the ONNX file (RPX_OPENCV_MODEL or opencv-dnn.conf) once
//   call:     rgb uint8 HxWx3 → blob (resize, /255, ImageNet mean/std, NCHW)
//             → forward → keep the output (the first call checks it)
//   teardown: free the network
//
//   rpxprof run --model ./build/examples/librpx-opencv-dnn.so:opencv_dnn_predict --inputs frame.npz --cost net.onnx --output opencv.json
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include "../common/example_config.hpp"
#include "rpxprof/model.h"

#define EXPORT __attribute__((visibility("default")))

namespace {

struct model {
    rpx_example::config cfg;
    cv::dnn::Net net;
    cv::Mat blob, output;         // reused: no allocation per call once warmed up
    bool checked = false;
};

const float kMean[3] = {0.485f, 0.456f, 0.406f}; // ImageNet, RGB order
const float kStd[3] = {0.229f, 0.224f, 0.225f};

} // namespace

extern "C" {

// extern: a namespace-scope const has internal linkage in C++
EXPORT extern const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;

EXPORT int opencv_dnn_predict_setup(void **state, const rpx_inputs *in,
                                              const rpx_run_info *info, rpx_error *err)
{
    std::string why;
    std::unique_ptr<model> m(new (std::nothrow) model);
    if (!m) return rpx_model_error(err, "out of memory");
    if (!rpx_example::rgb_input(in, "opencv_dnn_predict", err)) {
        return -1;
    }
    if (!rpx_example::load("RPX_OPENCV", "opencv-dnn", m->cfg, why)) {
        return rpx_model_error(err, "opencv_dnn_predict: %s", why.c_str());
    }
    if (info && info->device && std::strcmp(info->device, "cpu") != 0) {
        return rpx_model_error(err, "opencv_dnn_predict: this example runs OpenCV's CPU "
                                    "backend; profile it with --device cpu");
    }
    try {
        if (m->cfg.threads > 0) cv::setNumThreads(m->cfg.threads);
        m->net = cv::dnn::readNetFromONNX(m->cfg.model);
        m->net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        m->net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    } catch (const cv::Exception &e) {
        return rpx_model_error(err, "opencv_dnn_predict: cannot read %s (from %s): %s",
                               m->cfg.model.c_str(), m->cfg.source.c_str(), e.what());
    }
    if (m->net.empty()) {
        return rpx_model_error(err, "opencv_dnn_predict: %s holds no network", m->cfg.model.c_str());
    }
    *state = m.release();
    return 0;
}

EXPORT int opencv_dnn_predict(void *state, const rpx_inputs *in, rpx_error *err)
{
    model *m = static_cast<model *>(state);
    const rpx_tensor *t = rpx_example::rgb_input(in, "opencv_dnn_predict", err);
    if (!t) return -1;
    try {
        // a view of rpxprof's buffer: no copy (OpenCV's Mat does not write through it here)
        cv::Mat rgb((int)t->shape[0], (int)t->shape[1], CV_8UC3, const_cast<void *>(t->data));
        cv::Size size(m->cfg.width ? m->cfg.width : rgb.cols,
                      m->cfg.height ? m->cfg.height : rgb.rows);
        cv::dnn::blobFromImage(rgb, m->blob, 1.0 / 255.0, size, cv::Scalar(), false, false,
                               CV_32F);
        const int plane = size.width * size.height;
        float *p = m->blob.ptr<float>();
        for (int c = 0; c < 3; c++) {
            cv::Mat ch(1, plane, CV_32F, p + (size_t)c * plane);
            ch.convertTo(ch, CV_32F, 1.0 / kStd[c], -kMean[c] / kStd[c]);
        }
        m->net.setInput(m->blob);
        m->output = m->net.forward();
    } catch (const cv::Exception &e) {
        return rpx_model_error(err, "opencv_dnn_predict: %s", e.what());
    }
    if (!m->checked) {
        std::vector<int64_t> shape(m->output.size.p, m->output.size.p + m->output.dims);
        cv::Mat flat = m->output.isContinuous() ? m->output : m->output.clone();
        std::string why = rpx_example::check_output(m->cfg, shape, flat.ptr<float>(),
                                                    flat.total());
        if (m->output.type() != CV_32F) why = "the output is not float32";
        if (!why.empty()) return rpx_model_error(err, "opencv_dnn_predict: %s", why.c_str());
        m->checked = true;
    }
    return 0;
}

EXPORT void opencv_dnn_predict_teardown(void *state)
{
    delete static_cast<model *>(state);
}

} // extern "C"
