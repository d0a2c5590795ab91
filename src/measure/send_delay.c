/* send_delay.c — owns the report's `send_delay` block (rpxprof/send_delay.h):
 * the client's own delay between when a request (a paced call) could be sent
 * and when it was, its share of the latency, and the validity rule: a run
 * whose client fell behind its schedule beyond RPX_SEND_DELAY_TOLERANCE_NS at
 * the p99, or that did not send its schedule, is invalid, with the reason. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rpxprof/send_delay.h"

static json_t *us_or_null(double ns)
{
    return ns == ns && isfinite(ns) ? json_real(ns / 1e3) : json_null();
}

static json_t *ratio_or_null(double a, double b)
{
    return a == a && b == b && b > 0 && isfinite(a) ? json_real(a / b) : json_null();
}

json_t *rpx_send_delay_json(const rpx_send_delay_stats *st, const char *covers)
{
    json_t *o = json_object();
    char reason[400] = "";
    int valid = 1, saturated = 0;
    if (!o) return NULL;
    if (st->n > 0 && st->p99_ns > RPX_SEND_DELAY_TOLERANCE_NS) {
        valid = 0;
        snprintf(reason, sizeof reason,
                 "the client fell behind its schedule: its own send delay's p99 was %.0f us, "
                 "over the %.0f us tolerance (the machine held the client up, or it cannot send at this rate)",
                 st->p99_ns / 1e3, RPX_SEND_DELAY_TOLERANCE_NS / 1e3);
    } else if (st->requested_rate > 0 && st->achieved_rate == st->achieved_rate &&
               st->achieved_rate < RPX_SEND_RATE_TOLERANCE * st->requested_rate &&
               !st->target_bound) {
        valid = 0;
        saturated = 1;
        snprintf(reason, sizeof reason,
                 "the generator saturated: it sent %.4g per second of the %.4g asked (under "
                 "%.0f %%) while the target was not what held it back",
                 st->achieved_rate, st->requested_rate, 100 * RPX_SEND_RATE_TOLERANCE);
    }
    json_object_set_new(o, "n", json_integer(st->n));
    json_object_set_new(o, "p50_us", st->n > 0 ? us_or_null(st->p50_ns) : json_null());
    json_object_set_new(o, "p99_us", st->n > 0 ? us_or_null(st->p99_ns) : json_null());
    json_object_set_new(o, "max_us", st->n > 0 ? us_or_null(st->max_ns) : json_null());
    json_object_set_new(o, "mean_us", st->n > 0 ? us_or_null(st->mean_ns) : json_null());
    json_object_set_new(o, "share_p50",
                        st->n > 0 ? ratio_or_null(st->p50_ns, st->latency_p50_ns) : json_null());
    json_object_set_new(o, "share_p99",
                        st->n > 0 ? ratio_or_null(st->p99_ns, st->latency_p99_ns) : json_null());
    json_object_set_new(o, "waited_for_connection",
                        st->waited >= 0 ? json_integer(st->waited) : json_null());
    json_object_set_new(o, "tolerance_us", json_real(RPX_SEND_DELAY_TOLERANCE_NS / 1e3));
    json_object_set_new(o, "valid", json_boolean(valid));
    json_object_set_new(o, "saturated", json_boolean(saturated));
    json_object_set_new(o, "invalid_reason", valid ? json_null() : json_string(reason));
    json_object_set_new(o, "covers", json_string(covers));
    return o;
}

int rpx_send_delay_report_valid(const json_t *report, char *reason, size_t size)
{
    const json_t *b = json_object_get(json_object_get(json_object_get(report, "http"), "load"),
                                      "send_delay");
    if (!json_is_object(b)) b = json_object_get(json_object_get(report, "pacing"), "send_delay");
    if (!json_is_object(b)) return -1;
    if (json_is_true(json_object_get(b, "valid"))) return 1;
    snprintf(reason, size, "%s",
             json_string_value(json_object_get(b, "invalid_reason"))
                 ? json_string_value(json_object_get(b, "invalid_reason"))
                 : "the send delay block says invalid");
    return 0;
}
