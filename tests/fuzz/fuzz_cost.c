/* fuzz_cost.c — libFuzzer target for the ONNX reader and the whole analysis:
 * the input bytes are an .onnx file, analysed through
 * rpx_cost_analyze_onnx_buffer (the wire-level pass, protobuf-c, graph
 * building, shape inference, constant folding, costing, totals) and, when
 * accepted, serialised with every node. A refusal must carry a message;
 * an accepted model must have consistent totals. The same bytes are also
 * read as a file (a memfd, through the windowed file reader), which must give
 * the same answer or the same error code. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rpxprof/cost.h"
#include "rpxprof/error.h"
#include "common/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* rc of analysing the bytes as a file, and its JSON (NULL on error) */
static int as_file(const uint8_t *data, size_t size, json_t **out)
{
    char path[64];
    rpx_cost *c = NULL;
    rpx_error err = {0};
    int rc, fd = memfd_create("fuzz.onnx", 0);
    *out = NULL;
    if (fd < 0) abort();
    if (size && write(fd, data, size) != (ssize_t)size) abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    rc = rpx_cost_analyze_onnx(path, NULL, &c, &err);
    close(fd);
    if (rc == 0) {
        *out = rpx_cost_json(c, 1);
        json_object_del(json_object_get(*out, "model"), "path");
        rpx_cost_free(c);
    } else if (c || err.message[0] == '\0') {
        abort();
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpx_cost *c = NULL;
    rpx_error err = {0};
    rpx_cost_options o;
    const rpx_efficiency *e;
    json_t *j;
    char *s;
    size_t i;
    json_t *jf;
    int rc, frc;
    rpx_cost_options_init(&o);
    rc = rpx_cost_analyze_onnx_buffer(data, size, "fuzz.onnx", &o, &c, &err);
    frc = as_file(data, size, &jf);
    if (rc != frc) abort(); /* the file reader and the buffer reader disagree */
    if (rc != 0) {
        if (c || err.code == 0 || err.message[0] == '\0') abort();
        return 0;
    }
    e = rpx_cost_efficiency(c);
    if (!(e->coverage >= 0 && e->coverage <= 1)) abort();
    /* a total is a count (>= 0) or unknown (NaN: no node contributed), never negative */
    if (e->macs < 0 || e->flops < 0 || e->params < 0) abort();
    if (!isnan(e->dense_coverage) && !(e->dense_coverage >= 0 && e->dense_coverage <= 1)) abort();
    for (i = 0; i < rpx_cost_node_count(c); i++) {
        const rpx_cost_node *n = rpx_cost_node_at(c, i);
        if (!n || !n->name || !n->op_type) abort();
        if (n->supported ? !(n->flops >= 0) || n->reason : !isnan(n->flops) || !n->reason) abort();
    }
    for (i = 0; i < rpx_cost_warning_count(c); i++)
        if (!rpx_cost_warning_at(c, i)) abort();
    j = rpx_cost_json(c, 1);
    if (!j) abort();
    json_object_del(json_object_get(j, "model"), "path");
    if (!json_equal(j, jf)) abort();
    json_decref(jf);
    s = rpx_json_dumps(j);
    free(s);
    json_decref(j);
    rpx_cost_free(c);
    return 0;
}
