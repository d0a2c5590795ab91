/* session_run.c — owns a run's session block (docs/report.md#session): the
 * model's file and module source for the version under test, and the block
 * src/session/ builds from the finished report. Called once per report, after
 * the timed calls (hashing a file and asking git are never timed). */
#include <stdlib.h>
#include <string.h>

#include "loader/kinds.h"
#include "rpxprof/target.h"
#include "runner/runner_internal.h"
#include "session/session_internal.h"

/* the model's own file: the last file its target resolves (a shared object, an
 * ONNX file after its plugin, the demo library), NULL for a target that has
 * none (HTTP) or whose files take an interpreter to find (Python: the module
 * file its section reports is used instead) */
static char *model_file(const rpx_runner_config *c)
{
    char **files = NULL, *keep = NULL;
    size_t n = 0, i;
    rpx_error e = {0};
    const rpx_kind *row = rpx__kind_of_target(c->model, &c->target);
    if (c->target.custom || !c->model || rpx__kind_has(row, RPX_KIND_INTERPRETER) ||
        rpx__kind_has(row, RPX_KIND_REQUESTS))
        return NULL;
    if (rpx_target_files(c->model, &files, &n, &e) != 0) return NULL;
    if (n > 0) {
        keep = files[n - 1];
        files[n - 1] = NULL;
    }
    for (i = 0; i < n; i++) free(files[i]);
    free(files);
    return keep;
}

int rpx__run_session(const rpx_runner_config *c, json_t *report, const char *id,
                     const char *started)
{
    const json_t *kind = json_object_get(report, "target_kind");
    const json_t *section = json_is_string(kind) ? json_object_get(report, json_string_value(kind)) : NULL;
    const json_t *module = json_object_get(section, "module_file");
    char ended[32], *model = model_file(c);
    json_t *version, *block;
    rpx__session_now(ended);
    version = rpx__session_version(model, json_is_string(module) ? json_string_value(module) : NULL,
                                   c->commit);
    free(model);
    if (!version) return -1;
    block = rpx__session_block(report, id, started, ended, version, 0);
    return block ? json_object_set_new(report, "session", block) : -1;
}
