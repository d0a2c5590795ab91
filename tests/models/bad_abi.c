/* A model library built against a model ABI version this rpxprof does not speak. */
#include "rpxprof/model.h"

const int rpx_model_abi_version = 999;

int predict(void *state, const rpx_inputs *in, rpx_error *err);
int predict(void *state, const rpx_inputs *in, rpx_error *err)
{
    (void)state;
    (void)in;
    (void)err;
    return 0;
}
