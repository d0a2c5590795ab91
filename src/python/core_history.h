/* core_history.h — rpxprof._core's history calls (core_history.c), registered by
 * core_module.c; `raise` is its RpxprofError (message, code). The GIL is held. */
#ifndef RPX_CORE_HISTORY_H
#define RPX_CORE_HISTORY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* history_record(history, report_json, report_path=None) -> the recorded JSON text
 * ({"session", "series", "added"}); RpxprofError when the history cannot be written. */
PyObject *rpx__core_history_record(PyObject *(*raise)(const char *, int), PyObject *args,
                                   PyObject *kw);
/* history_compare(history, report_json, threshold=0.01, confirm=0, head=[report_json...])
 * -> JSON text (head: this run's later sessions of the benchmark, the confirming ones):
 * {"verdict": "slower"|"faster"|"same"|"inconclusive"|"incomparable"|"no_history",
 *  "why", "baseline_sessions", "check": rpx_history_check's result (with a series),
 *  "differs": [{"field", "base", "new"}] (incomparable)}. Reads the history only. */
PyObject *rpx__core_history_compare(PyObject *(*raise)(const char *, int), PyObject *args,
                                    PyObject *kw);

/* rpxprof.compare(a, b, history=PATH): the between-session spread for comparing the
 * report base_path with new_path, another session's (rpx_compare_opts.session_spread):
 * rpx_history_compare_spread's (the base's series, else its machine, without the two
 * reports' sessions and the new one's commit), else the "none" spread (the rule's own words). 0 and *spread (the caller's), or the error. */
#include <jansson.h>

#include "rpxprof/error.h"
int rpx__core_history_spread(const char *loc, const char *base_path, const char *new_path,
                             json_t **spread, rpx_error *err);

#endif
