/* output_models.c — test models for --check-outputs (docs/output-checks.md):
 * each exposes its outputs through NAME_outputs (include/rpxprof/model.h).
 *   exact     "sum" (float64, the sum of every input byte) and "head" (float32,
 *             the first 8 bytes of the first input, halved): the same answer
 *             for the same sample, every call
 *   wrong50   the same, but every 50th call (reference pass and warmup
 *             included) adds 1 to "sum"
 *   jitter    the same, but every third call multiplies "head" by (1 + 1e-7):
 *             not bit-exact, equal within --rtol 1e-6
 *   half      one float16 output "h" of 4 ones; every third call the first is the
 *             next float16 above 1 (1 + 2^-10)
 *   no_outputs the answer without NAME_outputs */
#include <stdint.h>
#include <string.h>

#include "rpxprof/model.h"

#define HEAD 8

static double sum_value;
static float head_value[HEAD];
static rpx_tensor out_tensors[2];
static long calls;

static void compute(const rpx_inputs *in)
{
    size_t a, j;
    const uint8_t *first = in->count ? (const uint8_t *)in->tensors[0].data : NULL;
    size_t first_n = in->count ? in->tensors[0].nbytes : 0;
    sum_value = 0;
    for (a = 0; a < in->count; a++)
        for (j = 0; j < in->tensors[a].nbytes; j++)
            sum_value += ((const uint8_t *)in->tensors[a].data)[j];
    for (j = 0; j < HEAD; j++) head_value[j] = j < first_n ? (float)first[j] * 0.5f : 0.0f;
    calls++;
}

static int outputs(rpx_outputs *out)
{
    out_tensors[0].name = "sum";
    out_tensors[0].dtype = RPX_DTYPE_FLOAT64;
    out_tensors[0].ndim = 0;
    out_tensors[0].count = 1;
    out_tensors[0].nbytes = sizeof sum_value;
    out_tensors[0].data = &sum_value;
    out_tensors[1].name = "head";
    out_tensors[1].dtype = RPX_DTYPE_FLOAT32;
    out_tensors[1].ndim = 1;
    out_tensors[1].shape[0] = HEAD;
    out_tensors[1].count = HEAD;
    out_tensors[1].nbytes = sizeof head_value;
    out_tensors[1].data = head_value;
    out->count = 2;
    out->tensors = out_tensors;
    return 0;
}

int exact(void *state, const rpx_inputs *in, rpx_error *err);
int exact_outputs(void *state, rpx_outputs *out, rpx_error *err);
int wrong50(void *state, const rpx_inputs *in, rpx_error *err);
int wrong50_outputs(void *state, rpx_outputs *out, rpx_error *err);
int jitter(void *state, const rpx_inputs *in, rpx_error *err);
int jitter_outputs(void *state, rpx_outputs *out, rpx_error *err);
int no_outputs(void *state, const rpx_inputs *in, rpx_error *err);
int half(void *state, const rpx_inputs *in, rpx_error *err);
int half_outputs(void *state, rpx_outputs *out, rpx_error *err);

int exact(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)err;
    compute(in);
    return 0;
}

int exact_outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    (void)state;
    (void)err;
    return outputs(out);
}

int wrong50(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)err;
    compute(in);
    if (calls % 50 == 0) sum_value += 1.0;
    return 0;
}

int wrong50_outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    return exact_outputs(state, out, err);
}

int jitter(void *state, const rpx_inputs *in, rpx_error *err)
{
    size_t j;
    (void)state;
    (void)err;
    compute(in);
    if (calls % 3 == 0)
        for (j = 0; j < HEAD; j++) head_value[j] *= 1.0f + 1e-7f * 4;
    return 0;
}

int jitter_outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    return exact_outputs(state, out, err);
}

int no_outputs(void *state, const rpx_inputs *in, rpx_error *err)
{
    return exact(state, in, err);
}

static uint16_t half_value[4];

int half(void *state, const rpx_inputs *in, rpx_error *err)
{
    size_t j;
    (void)state;
    (void)in;
    (void)err;
    calls++;
    for (j = 0; j < 4; j++) half_value[j] = 0x3C00; /* 1.0 */
    if (calls % 3 == 0) half_value[0] = 0x3C01;     /* 1 + 2^-10 */
    return 0;
}

int half_outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    (void)state;
    (void)err;
    out_tensors[0].name = "h";
    out_tensors[0].dtype = RPX_DTYPE_FLOAT16;
    out_tensors[0].ndim = 1;
    out_tensors[0].shape[0] = 4;
    out_tensors[0].count = 4;
    out_tensors[0].nbytes = sizeof half_value;
    out_tensors[0].data = half_value;
    out->count = 1;
    out->tensors = out_tensors;
    return 0;
}

/* Outputs whose names cannot be told apart (issue 37 item 12):
 *   dup_names  two outputs both named "sum"
 *   no_name    one output named ""
 *   zero_outputs no output at all (count 0) */
int dup_names(void *state, const rpx_inputs *in, rpx_error *err);
int dup_names_outputs(void *state, rpx_outputs *out, rpx_error *err);
int no_name(void *state, const rpx_inputs *in, rpx_error *err);
int no_name_outputs(void *state, rpx_outputs *out, rpx_error *err);
int zero_outputs(void *state, const rpx_inputs *in, rpx_error *err);
int zero_outputs_outputs(void *state, rpx_outputs *out, rpx_error *err);

int dup_names(void *state, const rpx_inputs *in, rpx_error *err)
{
    return exact(state, in, err);
}

int dup_names_outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    int rc = exact_outputs(state, out, err);
    out_tensors[1].name = "sum";
    return rc;
}

int no_name(void *state, const rpx_inputs *in, rpx_error *err)
{
    return exact(state, in, err);
}

int no_name_outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    int rc = exact_outputs(state, out, err);
    out_tensors[0].name = "";
    return rc;
}

int zero_outputs(void *state, const rpx_inputs *in, rpx_error *err)
{
    return exact(state, in, err);
}

int zero_outputs_outputs(void *state, rpx_outputs *out, rpx_error *err)
{
    (void)state;
    (void)err;
    out->count = 0;
    out->tensors = out_tensors;
    return 0;
}
