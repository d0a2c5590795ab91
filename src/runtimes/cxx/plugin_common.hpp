// plugin_common.hpp — what the C++ runtime plugins (librpxprof-opencv.so,
// librpxprof-torch.so) share: the kv pairs the model_file kind sends
// (WAVE6 contract: model, runtime, threads, inter_threads, graph_opt,
// library, seed; shape and dim describe inputs the host made), read by name
// with an unknown name refused as the http plugin refuses one; errors into an
// rpx_error; a file's SHA-256; the library a symbol lives in; dtype names;
// the JSON of a tensor's description. No rpxprof library code is linked: a
// plugin links its runtime, jansson and nettle only, so the sanitized build of
// rpxprof loads it as it is.
#ifndef RPX_RUNTIMES_PLUGIN_COMMON_HPP
#define RPX_RUNTIMES_PLUGIN_COMMON_HPP

#include <cstdint>
#include <string>
#include <vector>

#include <jansson.h>

#include "loader/plugins.h"
#include "rpxprof/error.h"

namespace rpx_rt {

// The pairs a runtime plugin takes; `has_*` says whether the host sent it.
struct options {
    std::string model, runtime, graph_opt, library;
    long long threads = 0, inter_threads = 0, seed = 0;
    bool has_threads = false, has_inter_threads = false, has_graph_opt = false;
    bool has_seed = false, has_library = false;
    std::vector<std::string> shapes, dims; // --shape / --dim as the host sent them
};

// Read `kv` for the plugin `who` ("opencv"); RPX_EINVAL naming the pair and
// what the plugin takes, for a name it does not know or a value of the wrong
// type; a missing `model`; a `runtime` other than `who`; a graph_opt other
// than none|basic|extended|all; negative thread counts.
int read_options(const rpx_kv_list *kv, const char *who, options &out, rpx_error *err);

// printf into err (may be NULL) and return code.
int fail(rpx_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// The file's SHA-256 as 64 hex digits, or "" when it cannot be read.
std::string file_sha256(const std::string &path);
// The path of the shared library holding `addr` (dladdr), or "" when unknown.
std::string library_of(const void *addr);

const char *dtype_name(rpx_dtype d);      // "float32"; "unknown" for none
// {"name", "dtype", "shape": [...]} ; dtype may be NULL (JSON null)
json_t *tensor_json(const std::string &name, const char *dtype, const std::vector<int64_t> &shape);
// shape as "1x3x224x224" for messages
std::string shape_text(const int64_t *shape, int ndim);

double now_ms();                          // CLOCK_MONOTONIC in ms
// the first line of a long exception text (libtorch's carry a C++ backtrace)
std::string first_lines(const std::string &what, int lines);

} // namespace rpx_rt

#endif
