/* demo.c — the packaged demo models (rpxprof-demo:SYMBOL).
 *
 * Placeholders, not models: they show the ABI and give the profiler known
 * work. Outputs are allocated in setup and written on every call; the timed
 * call never allocates.
 *   demo_depth(rgb: H×W×3 uint8)           H×W float32 depth map of 2.1
 *   demo_video_depth(frames: T×H×W×3 uint8) T×H×W float32, each frame a ramp
 *                                           from 1.9 to 2.1 across the width
 *   demo_pose(rgb_a, rgb_b: H×W×3 uint8)   identity rotation, 0.1 m x-translation
 *   demo_noop()                            nothing: the harness floor */
#include <stdlib.h>

#include "rpxprof/model.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT const int rpx_model_abi_version = RPX_MODEL_ABI_VERSION;

typedef struct demo_state {
    float *out;
    size_t count;
    size_t width;
} demo_state;

/* `name` must be a uint8 array of rank `ndim` whose last dimension is 3. */
static const rpx_tensor *image_input(const rpx_inputs *in, const char *model, const char *name,
                                     int ndim, const char *layout, rpx_error *err)
{
    const rpx_tensor *t = rpx_inputs_find(in, name);
    if (!t) {
        rpx_model_error(err, "%s: the inputs have no array '%s'; make one with "
                             "`rpxprof inputs make FILE.npz %s=%s:uint8=128`",
                        model, name, name, layout);
        return NULL;
    }
    if (t->dtype != RPX_DTYPE_UINT8 || t->ndim != ndim || t->shape[ndim - 1] != 3) {
        rpx_model_error(err, "%s: input '%s' must be a uint8 array of shape %s", model, name,
                        layout);
        return NULL;
    }
    return t;
}

static int alloc_out(void **state, size_t count, size_t width, rpx_error *err)
{
    demo_state *s = calloc(1, sizeof *s);
    if (!s) return rpx_model_error(err, "out of memory");
    s->out = malloc((count ? count : 1) * sizeof *s->out);
    if (!s->out) {
        free(s);
        return rpx_model_error(err, "out of memory allocating %zu output values", count);
    }
    s->count = count;
    s->width = width;
    *state = s;
    return 0;
}

static void free_state(void *state)
{
    demo_state *s = state;
    if (!s) return;
    free(s->out);
    free(s);
}

/* ---- demo_depth ---- */
EXPORT int demo_depth_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                            rpx_error *err)
{
    const rpx_tensor *rgb = image_input(in, "demo_depth", "rgb", 3, "H×W×3", err);
    (void)info;
    if (!rgb) return -1;
    return alloc_out(state, (size_t)rgb->shape[0] * (size_t)rgb->shape[1], (size_t)rgb->shape[1],
                     err);
}

EXPORT int demo_depth(void *state, const rpx_inputs *in, rpx_error *err)
{
    demo_state *s = state;
    size_t i;
    (void)in;
    (void)err;
    for (i = 0; i < s->count; i++) s->out[i] = 2.1f;
    return 0;
}

EXPORT void demo_depth_teardown(void *state)
{
    free_state(state);
}

/* ---- demo_video_depth ---- */
EXPORT int demo_video_depth_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                                  rpx_error *err)
{
    const rpx_tensor *f = image_input(in, "demo_video_depth", "frames", 4, "T×H×W×3", err);
    (void)info;
    if (!f) return -1;
    return alloc_out(state, (size_t)f->shape[0] * (size_t)f->shape[1] * (size_t)f->shape[2],
                     (size_t)f->shape[2], err);
}

EXPORT int demo_video_depth(void *state, const rpx_inputs *in, rpx_error *err)
{
    demo_state *s = state;
    size_t i, x, w = s->width;
    float step = w > 1 ? 0.2f / (float)(w - 1) : 0.0f;
    (void)in;
    (void)err;
    for (i = 0; i < s->count; i += w)
        for (x = 0; x < w; x++) s->out[i + x] = 1.9f + step * (float)x;
    return 0;
}

EXPORT void demo_video_depth_teardown(void *state)
{
    free_state(state);
}

/* ---- demo_pose ---- */
EXPORT int demo_pose_setup(void **state, const rpx_inputs *in, const rpx_run_info *info,
                           rpx_error *err)
{
    (void)info;
    if (!image_input(in, "demo_pose", "rgb_a", 3, "H×W×3", err) ||
        !image_input(in, "demo_pose", "rgb_b", 3, "H×W×3", err))
        return -1;
    return alloc_out(state, 12, 4, err); /* [R | t], 3×4 row-major */
}

EXPORT int demo_pose(void *state, const rpx_inputs *in, rpx_error *err)
{
    demo_state *s = state;
    static const float pose[12] = {1, 0, 0, 0.1f, 0, 1, 0, 0, 0, 0, 1, 0};
    size_t i;
    (void)in;
    (void)err;
    for (i = 0; i < 12; i++) s->out[i] = pose[i];
    return 0;
}

EXPORT void demo_pose_teardown(void *state)
{
    free_state(state);
}

/* ---- demo_noop ---- */
EXPORT int demo_noop(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    return 0;
}
