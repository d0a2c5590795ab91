/* json_set.h — building report objects with jansson: json_object_set_new
 * ignores a NULL value, so a failed allocation would silently drop a key.
 * RPX_JSON_SET records it in `ok` instead. */
#ifndef RPX_COMMON_JSON_SET_H
#define RPX_COMMON_JSON_SET_H

#include <jansson.h>

#define RPX_JSON_SET(ok, obj, key, val)                                        \
    do {                                                                       \
        json_t *rpx_v_ = (val);                                                \
        if (!rpx_v_ || json_object_set_new((obj), (key), rpx_v_) != 0) (ok) = 0; \
    } while (0)

#endif
