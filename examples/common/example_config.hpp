// example_config.hpp — how the runtime examples find their model file and
// sizes: environment variables first, then a small sidecar file.
//
//   RPX_<PREFIX>_MODEL   the model file (ONNX for OpenCV, TorchScript for libtorch)
//   RPX_<PREFIX>_SIZE    the network's input HxW (default: the rgb input's own size)
//   RPX_<PREFIX>_EXPECT  the output shape the first call must produce, e.g. 1x1000
//   RPX_<PREFIX>_THREADS the runtime's intra-op threads (default: the CPUs this
//                        process may run on; 0: leave the runtime's own default,
//                        which for Debian's libtorch is one, and slow: BENCHMARKS.md)
//
// (the variables override the file's lines) or, when RPX_<PREFIX>_MODEL is not
// set, the file named by RPX_<PREFIX>_CONFIG
// (default: <name>.conf in the current folder), with lines `model = net.onnx`,
// `size = 480x640`, `expect = 1x1000`, `threads = 2` ('#' starts a comment; a relative model
// path is relative to the config file's folder).
#ifndef RPX_EXAMPLE_CONFIG_HPP
#define RPX_EXAMPLE_CONFIG_HPP

#include <sched.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rpxprof/model.h"

namespace rpx_example {

struct config {
    std::string model;
    int height = 0, width = 0;      // 0: the input's own size
    std::vector<int64_t> expect;    // empty: any shape
    int threads = 0;                // the runtime's intra-op threads; 0: its default
    std::string source;             // where it came from, for messages
};

inline std::string trim(const std::string &s)
{
    size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// "480x640" → {480, 640}; false when it is not dims of positive integers.
inline bool parse_dims(const std::string &text, std::vector<int64_t> &out)
{
    std::stringstream in(text);
    std::string part;
    out.clear();
    while (std::getline(in, part, 'x')) {
        char *end = nullptr;
        long long v = std::strtoll(part.c_str(), &end, 10);
        if (part.empty() || *end || v <= 0) return false;
        out.push_back(v);
    }
    return !out.empty();
}

// Fills `c`; on failure returns false with `why` saying what to fix.
inline bool load(const char *prefix, const char *name, config &c, std::string &why)
{
    std::string p(prefix);
    const char *model = std::getenv((p + "_MODEL").c_str());
    std::string size, expect, threads;
    if (model && *model) {
        c.model = model;
        c.source = p + "_MODEL";
    } else {
        const char *cfg = std::getenv((p + "_CONFIG").c_str());
        std::string path = cfg && *cfg ? cfg : std::string(name) + ".conf";
        std::ifstream f(path);
        if (!f) {
            why = "no model: set " + p + "_MODEL=FILE or write " + path +
                  " with a line 'model = FILE' (docs/examples.md)";
            return false;
        }
        std::string line, dir = path.find('/') == std::string::npos
                                    ? std::string()
                                    : path.substr(0, path.rfind('/') + 1);
        int n = 0;
        while (std::getline(f, line)) {
            n++;
            line = trim(line.substr(0, line.find('#')));
            if (line.empty()) continue;
            size_t eq = line.find('=');
            if (eq == std::string::npos) {
                why = path + ":" + std::to_string(n) + ": expected 'key = value'";
                return false;
            }
            std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
            if (k == "model") c.model = (v.empty() || v[0] == '/') ? v : dir + v;
            else if (k == "size") size = v;
            else if (k == "expect") expect = v;
            else if (k == "threads") threads = v;
            else {
                why = path + ":" + std::to_string(n) + ": unknown key '" + k +
                      "' (model, size, expect, threads)";
                return false;
            }
        }
        if (c.model.empty()) {
            why = path + ": no 'model = FILE' line";
            return false;
        }
        c.source = path;
    }
    // the variables override the file's lines
    const char *env_size = std::getenv((p + "_SIZE").c_str());
    const char *env_expect = std::getenv((p + "_EXPECT").c_str());
    const char *env_threads = std::getenv((p + "_THREADS").c_str());
    if (env_size && *env_size) size = env_size;
    if (env_expect && *env_expect) expect = env_expect;
    if (env_threads && *env_threads) threads = env_threads;
    std::vector<int64_t> hw;
    if (!size.empty()) {
        if (!parse_dims(size, hw) || hw.size() != 2) {
            why = c.source + ": size '" + size + "' is not HxW (e.g. 480x640)";
            return false;
        }
        c.height = (int)hw[0];
        c.width = (int)hw[1];
    }
    if (!expect.empty() && !parse_dims(expect, c.expect)) {
        why = c.source + ": expect '" + expect + "' is not a shape (e.g. 1x1000)";
        return false;
    }
    if (!threads.empty()) {
        std::vector<int64_t> t;
        if (threads == "0") {
            c.threads = 0;
        } else if (!parse_dims(threads, t) || t.size() != 1 || t[0] > 4096) {
            why = c.source + ": threads '" + threads + "' is not a number of threads (0: the "
                  "runtime's default)";
            return false;
        } else {
            c.threads = (int)t[0];
        }
    } else {
        cpu_set_t set;
        c.threads = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    }
    return true;
}

// The examples' one input: `rgb`, uint8 HxWx3; NULL with a message otherwise.
inline const rpx_tensor *rgb_input(const rpx_inputs *in, const char *who, rpx_error *err)
{
    const rpx_tensor *t = rpx_inputs_find(in, "rgb");
    if (!t || t->dtype != RPX_DTYPE_UINT8 || t->ndim != 3 || t->shape[2] != 3) {
        rpx_model_error(err, "%s: needs an array 'rgb', uint8 HxWx3 (make one with: rpxprof "
                             "inputs make frame.npz rgb=480x640x3:uint8)", who);
        return nullptr;
    }
    return t;
}

inline std::string shape_text(const std::vector<int64_t> &s)
{
    std::string t;
    for (size_t i = 0; i < s.size(); i++) t += (i ? "x" : "") + std::to_string(s[i]);
    return t.empty() ? "scalar" : t;
}

// The first call's check: the output has the expected shape (when one is
// configured) and every value is finite. Empty `why` means it passed.
inline std::string check_output(const config &c, const std::vector<int64_t> &shape,
                                const float *data, size_t count)
{
    if (!c.expect.empty() && shape != c.expect)
        return "output shape " + shape_text(shape) + ", expected " + shape_text(c.expect) +
               " (" + c.source + ")";
    if (count == 0) return "the output is empty";
    for (size_t i = 0; i < count; i++)
        if (!std::isfinite(data[i]))
            return "output value " + std::to_string(i) + " of " + shape_text(shape) +
                   " is not finite";
    return std::string();
}

} // namespace rpx_example
#endif
