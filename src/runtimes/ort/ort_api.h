/* ort_api.h — the part of ONNX Runtime's C API that librpxprof-ort.so uses,
 * declared here from the documented ABI (facts only: each entry's position
 * in the OrtApi table, its name and its signature), so that rpxprof builds
 * without ONNX Runtime's headers and loads the library at run time.
 *
 * Where the facts come from: the OrtApi struct of ONNX Runtime's public
 * header include/onnxruntime/core/session/onnxruntime_c_api.h (github.com/
 * microsoft/onnxruntime). The table is append-only ("End of Version 1 - DO
 * NOT MODIFY ABOVE"): entries 0-101 are API version 1, 102-110 (up to
 * SessionEndProfiling) were added by version 2, and every later release keeps
 * their positions. OrtGetApiBase() is the library's one entry point; its
 * struct holds GetApi(version) then GetVersionString(). Enum values below are
 * the header's (ONNXTensorElementDataType equals ONNX's TensorProto.DataType).
 * ort_api.c checks at load time what can be checked (the version string, a
 * status made and read back through entries 0, 1, 2 and 93). */
#ifndef RPX_ORT_API_H
#define RPX_ORT_API_H

#include <stddef.h>
#include <stdint.h>

#include "rpxprof/error.h"

/* the API version asked of GetApi: 2 has every entry below */
#define RPX_ORT_API_NEEDED 2u

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtAllocator OrtAllocator;
typedef struct OrtRunOptions OrtRunOptions;

/* GraphOptimizationLevel, ExecutionMode, OrtLoggingLevel, OrtAllocatorType,
 * OrtMemType, ONNXType */
enum { RPX_ORT_DISABLE_ALL = 0, RPX_ORT_ENABLE_BASIC = 1, RPX_ORT_ENABLE_EXTENDED = 2,
       RPX_ORT_ENABLE_ALL = 99 };
enum { RPX_ORT_SEQUENTIAL = 0, RPX_ORT_PARALLEL = 1 };
enum { RPX_ORT_LOGGING_WARNING = 2, RPX_ORT_LOGGING_ERROR = 3 };
enum { RPX_ORT_ARENA_ALLOCATOR = 1, RPX_ORT_MEM_DEFAULT = 0 };
enum { RPX_ORT_ONNX_TYPE_TENSOR = 1 };

/* The entries used, by position in the OrtApi table, and their types. */
#define RPX_ORT_ENTRIES(X)                                                                    \
    X(0, CreateStatus, OrtStatus *, (int code, const char *msg))                               \
    X(1, GetErrorCode, int, (const OrtStatus *status))                                         \
    X(2, GetErrorMessage, const char *, (const OrtStatus *status))                             \
    X(3, CreateEnv, OrtStatus *, (int level, const char *logid, OrtEnv **out))                 \
    X(6, DisableTelemetryEvents, OrtStatus *, (const OrtEnv *env))                            \
    X(7, CreateSession, OrtStatus *,                                                           \
      (const OrtEnv *env, const char *path, const OrtSessionOptions *o, OrtSession **out))     \
    X(9, Run, OrtStatus *,                                                                     \
      (OrtSession *s, const OrtRunOptions *ro, const char *const *in_names,                   \
       const OrtValue *const *in, size_t n_in, const char *const *out_names, size_t n_out,     \
       OrtValue **out))                                                                        \
    X(10, CreateSessionOptions, OrtStatus *, (OrtSessionOptions **out))                        \
    X(11, SetOptimizedModelFilePath, OrtStatus *, (OrtSessionOptions *o, const char *path))    \
    X(13, SetSessionExecutionMode, OrtStatus *, (OrtSessionOptions *o, int mode))              \
    X(14, EnableProfiling, OrtStatus *, (OrtSessionOptions *o, const char *prefix))            \
    X(22, SetSessionLogSeverityLevel, OrtStatus *, (OrtSessionOptions *o, int level))          \
    X(23, SetSessionGraphOptimizationLevel, OrtStatus *, (OrtSessionOptions *o, int level))    \
    X(24, SetIntraOpNumThreads, OrtStatus *, (OrtSessionOptions *o, int n))                    \
    X(25, SetInterOpNumThreads, OrtStatus *, (OrtSessionOptions *o, int n))                    \
    X(30, SessionGetInputCount, OrtStatus *, (const OrtSession *s, size_t *out))               \
    X(31, SessionGetOutputCount, OrtStatus *, (const OrtSession *s, size_t *out))              \
    X(33, SessionGetInputTypeInfo, OrtStatus *,                                                \
      (const OrtSession *s, size_t i, OrtTypeInfo **out))                                      \
    X(34, SessionGetOutputTypeInfo, OrtStatus *,                                               \
      (const OrtSession *s, size_t i, OrtTypeInfo **out))                                      \
    X(36, SessionGetInputName, OrtStatus *,                                                    \
      (const OrtSession *s, size_t i, OrtAllocator *a, char **out))                            \
    X(37, SessionGetOutputName, OrtStatus *,                                                   \
      (const OrtSession *s, size_t i, OrtAllocator *a, char **out))                            \
    X(49, CreateTensorWithDataAsOrtValue, OrtStatus *,                                         \
      (const OrtMemoryInfo *info, void *data, size_t len, const int64_t *shape, size_t rank,   \
       int dtype, OrtValue **out))                                                             \
    X(51, GetTensorMutableData, OrtStatus *, (OrtValue *v, void **out))                        \
    X(55, CastTypeInfoToTensorInfo, OrtStatus *,                                               \
      (const OrtTypeInfo *t, const OrtTensorTypeAndShapeInfo **out))                           \
    X(56, GetOnnxTypeFromTypeInfo, OrtStatus *, (const OrtTypeInfo *t, int *out))              \
    X(60, GetTensorElementType, OrtStatus *, (const OrtTensorTypeAndShapeInfo *t, int *out))   \
    X(61, GetDimensionsCount, OrtStatus *, (const OrtTensorTypeAndShapeInfo *t, size_t *out))  \
    X(62, GetDimensions, OrtStatus *,                                                          \
      (const OrtTensorTypeAndShapeInfo *t, int64_t *dims, size_t n))                           \
    X(63, GetSymbolicDimensions, OrtStatus *,                                                  \
      (const OrtTensorTypeAndShapeInfo *t, const char **names, size_t n))                      \
    X(65, GetTensorTypeAndShape, OrtStatus *, (const OrtValue *v, OrtTensorTypeAndShapeInfo **out)) \
    X(69, CreateCpuMemoryInfo, OrtStatus *, (int type, int mem, OrtMemoryInfo **out))          \
    X(76, AllocatorFree, OrtStatus *, (OrtAllocator *a, void *p))                              \
    X(78, GetAllocatorWithDefaultOptions, OrtStatus *, (OrtAllocator **out))                   \
    X(92, ReleaseEnv, void, (OrtEnv *p))                                                       \
    X(93, ReleaseStatus, void, (OrtStatus *p))                                                 \
    X(94, ReleaseMemoryInfo, void, (OrtMemoryInfo *p))                                         \
    X(95, ReleaseSession, void, (OrtSession *p))                                               \
    X(96, ReleaseValue, void, (OrtValue *p))                                                   \
    X(98, ReleaseTypeInfo, void, (OrtTypeInfo *p))                                             \
    X(99, ReleaseTensorTypeAndShapeInfo, void, (OrtTensorTypeAndShapeInfo *p))                 \
    X(100, ReleaseSessionOptions, void, (OrtSessionOptions *p))                                \
    X(110, SessionEndProfiling, OrtStatus *, (OrtSession *s, OrtAllocator *a, char **out))

/* The loaded library: one function pointer per entry used. */
typedef struct rpx_ort_api {
    void *handle;
    char *path;                   /* as dlopen was given it, resolved to a file when found */
    char version[32];             /* GetVersionString: "1.31.1" */
#define RPX_ORT_FIELD(idx, name, ret, args) ret(*name) args;
    RPX_ORT_ENTRIES(RPX_ORT_FIELD)
#undef RPX_ORT_FIELD
} rpx_ort_api;

/* dlopen `path` (a file, or a soname for the loader's path), check its
 * version and API, fill `api`. `how_to_get` ends the message when it cannot
 * be loaded. 0, or RPX_EUNAVAILABLE / RPX_EUNSUPPORTED with the message. */
int rpx__ort_api_load(const char *path, rpx_ort_api *api, rpx_error *err);
void rpx__ort_api_unload(rpx_ort_api *api);
/* An OrtStatus as an error: `what` (e.g. "model.onnx: ONNX Runtime cannot
 * read it") + ": " + ORT's words; releases the status. Returns the code. */
int rpx__ort_fail(const rpx_ort_api *api, OrtStatus *st, rpx_error *err, int code,
                  const char *what);

/* The tensor element types (ONNXTensorElementDataType) and rpxprof's dtypes. */
int rpx__ort_dtype_from(int ort_type);     /* rpx_dtype, 0 when rpxprof has none */
int rpx__ort_dtype_to(int dtype);          /* ONNXTensorElementDataType, 0 none */
const char *rpx__ort_type_name(int ort_type); /* "float32", ... "string", "type 16" */

#endif
