/* svg.h — the roofline picture (svg.c) into an output of the guard
 * (common/output.h) opened before the work: internal, since rpx_output is. */
#ifndef RPX_REPORT_SVG_H
#define RPX_REPORT_SVG_H

#include <jansson.h>

#include "common/output.h"

/* rpx_roofline_svg_write into an output opened before the work; frees `o`
 * either way. */
int rpx_roofline_svg_commit(rpx_output *o, const json_t *roofline, rpx_error *err);

#endif
