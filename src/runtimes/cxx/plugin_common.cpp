// plugin_common.cpp — the C++ runtime plugins' shared helpers (plugin_common.hpp):
// kv pairs read by name, errors, SHA-256 (nettle), dladdr, tensor JSON.
#include "plugin_common.hpp"

#include <dlfcn.h>
#include <time.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <nettle/sha2.h>

namespace rpx_rt {

namespace {

const char *const kNames[] = {"model", "runtime", "threads", "inter_threads", "graph_opt",
                              "library", "seed", "shape", "dim"};

const char *type_word(rpx_kv_type t)
{
    return t == RPX_KV_TEXT ? "text" : t == RPX_KV_INTEGER ? "a whole number" : "a number";
}

int want(const rpx_kv &p, rpx_kv_type t, const char *who, rpx_error *err)
{
    if (p.type == t && (t != RPX_KV_TEXT || p.text)) return 0;
    return fail(err, RPX_EINVAL, "the %s plugin: option '%s' takes %s, not %s; this rpxprof and "
                "its plugin are from different builds", who, p.name, type_word(t),
                type_word(p.type));
}

int unknown(const char *name, const char *who, rpx_error *err)
{
    std::string list;
    for (const char *n : kNames) list += (list.empty() ? "" : ", ") + std::string(n);
    return fail(err, RPX_EINVAL, "the %s plugin: no option '%s'; it takes %s; this rpxprof and "
                "its plugin are from different builds, or the option is misspelt", who,
                name ? name : "(null)", list.c_str());
}

int read_pair(const rpx_kv &p, const char *who, options &o, rpx_error *err)
{
    const std::string n = p.name ? p.name : "";
    int rc;
    long long *integer = n == "threads" ? &o.threads : n == "inter_threads" ? &o.inter_threads
                       : n == "seed" ? &o.seed : nullptr;
    if (integer) {
        if ((rc = want(p, RPX_KV_INTEGER, who, err)) != 0) return rc;
        *integer = p.integer;
        (n == "threads" ? o.has_threads : n == "seed" ? o.has_seed : o.has_inter_threads) = true;
        if (n != "seed" && p.integer < 0)
            return fail(err, RPX_EINVAL, "the %s plugin: %s %lld is negative; give a count of "
                        "threads, or 0 for the runtime's default", who, p.name, p.integer);
        return 0;
    }
    std::string *text = n == "model" ? &o.model : n == "runtime" ? &o.runtime
                      : n == "graph_opt" ? &o.graph_opt : n == "library" ? &o.library : nullptr;
    if (!text && n != "shape" && n != "dim") return unknown(p.name, who, err);
    if ((rc = want(p, RPX_KV_TEXT, who, err)) != 0) return rc;
    if (n == "shape") o.shapes.push_back(p.text);
    else if (n == "dim") o.dims.push_back(p.text);
    else *text = p.text;
    if (n == "graph_opt") o.has_graph_opt = true;
    if (n == "library") o.has_library = true;
    return 0;
}

} // namespace

int fail(rpx_error *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int read_options(const rpx_kv_list *kv, const char *who, options &out, rpx_error *err)
{
    int rc;
    out = options();
    for (size_t i = 0; kv && i < kv->n; i++)
        if ((rc = read_pair(kv->items[i], who, out, err)) != 0) return rc;
    if (out.model.empty())
        return fail(err, RPX_EINVAL, "the %s plugin: no model file given (the pair 'model'); "
                    "this rpxprof and its plugin are from different builds", who);
    if (!out.runtime.empty() && out.runtime != who)
        return fail(err, RPX_EINVAL, "the %s plugin was asked for runtime '%s'; it runs %s only",
                    who, out.runtime.c_str(), who);
    if (out.has_graph_opt && out.graph_opt != "none" && out.graph_opt != "basic" &&
        out.graph_opt != "extended" && out.graph_opt != "all")
        return fail(err, RPX_EINVAL, "--graph-opt %s: write none, basic, extended or all",
                    out.graph_opt.c_str());
    return 0;
}

std::string file_sha256(const std::string &path)
{
    FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) return "";
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    std::vector<unsigned char> buf(1 << 20);
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) sha256_update(&ctx, n, buf.data());
    bool bad = std::ferror(f) != 0;
    std::fclose(f);
    if (bad) return "";
    unsigned char digest[SHA256_DIGEST_SIZE];
    sha256_digest(&ctx, sizeof digest, digest);
    char hex[2 * SHA256_DIGEST_SIZE + 1];
    for (size_t i = 0; i < sizeof digest; i++) std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return hex;
}

std::string library_of(const void *addr)
{
    Dl_info info;
    if (!addr || dladdr(addr, &info) == 0 || !info.dli_fname) return "";
    char real[4096];
    if (realpath(info.dli_fname, real)) return real;
    return info.dli_fname;
}

const char *dtype_name(rpx_dtype d)
{
    switch (d) {
    case RPX_DTYPE_BOOL: return "bool";
    case RPX_DTYPE_INT8: return "int8";
    case RPX_DTYPE_INT16: return "int16";
    case RPX_DTYPE_INT32: return "int32";
    case RPX_DTYPE_INT64: return "int64";
    case RPX_DTYPE_UINT8: return "uint8";
    case RPX_DTYPE_UINT16: return "uint16";
    case RPX_DTYPE_UINT32: return "uint32";
    case RPX_DTYPE_UINT64: return "uint64";
    case RPX_DTYPE_FLOAT16: return "float16";
    case RPX_DTYPE_FLOAT32: return "float32";
    case RPX_DTYPE_FLOAT64: return "float64";
    }
    return "unknown";
}

json_t *tensor_json(const std::string &name, const char *dtype, const std::vector<int64_t> &shape)
{
    json_t *dims = json_array();
    for (int64_t d : shape) json_array_append_new(dims, d >= 0 ? json_integer(d) : json_null());
    return json_pack("{s:s, s:o, s:o}", "name", name.c_str(), "dtype",
                     dtype ? json_string(dtype) : json_null(), "shape", dims);
}

std::string shape_text(const int64_t *shape, int ndim)
{
    std::string s;
    for (int i = 0; i < ndim; i++)
        s += (i ? "x" : "") + (shape[i] >= 0 ? std::to_string(shape[i]) : std::string("?"));
    return ndim ? s : "scalar";
}

double now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

std::string first_lines(const std::string &what, int lines)
{
    size_t at = 0;
    for (int i = 0; i < lines; i++) {
        size_t nl = what.find('\n', at);
        if (nl == std::string::npos) return what;
        at = nl + 1;
    }
    return what.substr(0, at ? at - 1 : 0);
}

} // namespace rpx_rt
