/* comparable.c — owns whether two sessions may be compared (issue 36 §1,
 * docs/statistics.md#comparability): each difference of their fingerprints,
 * named by its field, and its effect. Different CPU model, core count, GPU
 * model, device, precision or inputs make two sessions incomparable (their
 * times measure different work or different hardware); any other difference
 * (the kernel, rpxprof's version, microcode, governor, boost, Python or torch
 * versions, the other options of the work) is a note for the reader. */
#include <string.h>

#include "rpxprof/session.h"

/* the fingerprint's fields whose difference makes two sessions incomparable */
static const char *const refusing[] = {
    "machine.cpu_model", "machine.cores",  "machine.logical_cpus", "machine.gpu_model",
    "work.device",       "work.precision", "work.inputs_digest",
};

static int refuses(const char *field)
{
    size_t i;
    for (i = 0; i < sizeof refusing / sizeof refusing[0]; i++)
        if (strcmp(refusing[i], field) == 0) return 1;
    return 0;
}

/* the differences between two objects of the fingerprint (machine, software,
 * work), member by member, both sides' keys; -1 out of memory */
static int diff_part(const char *part, const json_t *a, const json_t *b, json_t *diffs, int *refused)
{
    const char *k;
    json_t *v;
    const json_t *sides[2] = {a, b};
    int s;
    for (s = 0; s < 2; s++) {
        json_object_foreach((json_t *)sides[s], k, v) {
            const json_t *x = json_object_get(a, k), *y = json_object_get(b, k);
            char field[128];
            json_t *d;
            if (s == 1 && json_object_get(a, k)) continue; /* seen from a's side */
            if (json_equal((json_t *)(x ? x : json_null()), (json_t *)(y ? y : json_null()))) continue;
            snprintf(field, sizeof field, "%s.%s", part, k);
            d = json_object();
            if (!d) return -1;
            json_object_set_new(d, "field", json_string(field));
            json_object_set_new(d, "base", x ? json_deep_copy(x) : json_null());
            json_object_set_new(d, "new", y ? json_deep_copy(y) : json_null());
            json_object_set_new(d, "effect", json_string(refuses(field) ? "incomparable" : "note"));
            *refused |= refuses(field);
            if (json_array_append_new(diffs, d) != 0) return -1;
        }
    }
    return 0;
}

int rpx_session_comparable(const json_t *base_session, const json_t *new_session, json_t **diffs)
{
    static const char *const parts[] = {"machine", "software", "work"};
    const json_t *fa = json_object_get(base_session, "fingerprint");
    const json_t *fb = json_object_get(new_session, "fingerprint");
    json_t *d;
    int refused = 0;
    size_t i;
    if (diffs) *diffs = NULL;
    if (!json_is_object(fa) || !json_is_object(fb)) return RPX_EINVAL;
    if (!(d = json_array())) return RPX_ENOMEM;
    for (i = 0; i < 3; i++) {
        const json_t *a = json_object_get(fa, parts[i]), *b = json_object_get(fb, parts[i]);
        json_t *empty = json_object();
        int rc = diff_part(parts[i], json_is_object(a) ? a : empty, json_is_object(b) ? b : empty, d,
                           &refused);
        json_decref(empty);
        if (rc != 0) {
            json_decref(d);
            return RPX_ENOMEM;
        }
    }
    if (diffs) *diffs = d;
    else json_decref(d);
    return refused ? 0 : 1;
}
