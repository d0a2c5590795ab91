/* ort_session.c — the session options both sessions of an ONNX Runtime
 * target are made with (the timed one in ort_target.c, the profiling one in
 * ort_layers.c): log level, graph optimisation, execution mode, threads. */
#include <string.h>

#include "runtimes/ort/ort_internal.h"

static const struct {
    const char *name;
    int level;
} levels[] = {{"none", RPX_ORT_DISABLE_ALL},
              {"basic", RPX_ORT_ENABLE_BASIC},
              {"extended", RPX_ORT_ENABLE_EXTENDED},
              {"all", RPX_ORT_ENABLE_ALL}};

int rpx__ort_graph_level(const char *name)
{
    size_t i;
    for (i = 0; name && i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(levels[i].name, name) == 0) return levels[i].level;
    return -1;
}

#define ORT_CHECK(expr, what)                                                                 \
    do {                                                                                      \
        OrtStatus *st_ = (expr);                                                              \
        if (st_) return rpx__ort_fail(&s->api, st_, err, RPX_EUNAVAILABLE, what);             \
    } while (0)

int rpx__ort_session_options(ort_state *s, OrtSessionOptions **out, rpx_error *err)
{
    OrtSessionOptions *o = NULL;
    int level = rpx__ort_graph_level(s->graph_opt);
    *out = NULL;
    ORT_CHECK(s->api.CreateSessionOptions(&o), "ONNX Runtime: CreateSessionOptions");
    *out = o;
    ORT_CHECK(s->api.SetSessionLogSeverityLevel(o, RPX_ORT_LOGGING_ERROR), "ONNX Runtime: log level");
    ORT_CHECK(s->api.SetSessionGraphOptimizationLevel(o, level), "ONNX Runtime: graph_opt");
    ORT_CHECK(s->api.SetSessionExecutionMode(
                  o, strcmp(s->execution_mode, "parallel") == 0 ? RPX_ORT_PARALLEL : RPX_ORT_SEQUENTIAL),
              "ONNX Runtime: execution mode");
    ORT_CHECK(s->api.SetIntraOpNumThreads(o, (int)s->threads), "ONNX Runtime: threads");
    ORT_CHECK(s->api.SetInterOpNumThreads(o, (int)s->inter_threads), "ONNX Runtime: inter_threads");
    return 0;
}
