/* json_keys.h — reading the JSON files users write (a batch manifest, a GPU
 * spec file, a cost object): a file that does not exist or is a folder is
 * named as such, an unknown key is refused with the nearest valid name
 * ("did you mean 'unit'?"), and a value of the wrong type says what was
 * expected and what was found. Library code: nothing is printed. */
#ifndef RPX_COMMON_JSON_KEYS_H
#define RPX_COMMON_JSON_KEYS_H

#include <stddef.h>

#include <jansson.h>

#include "rpxprof/error.h"

/* Optimal-string-alignment distance (Levenshtein plus adjacent transposition,
 * so "unti" is 1 from "unit"), ASCII case ignored. Strings longer than 255
 * bytes count as far from everything (SIZE_MAX). */
size_t rpx_json_key_distance(const char *a, const char *b);

/* The entry of `allowed` (n names) nearest to `key`, or NULL when none is
 * close enough to be a likely misspelling. */
const char *rpx_json_nearest_key(const char *key, const char *const *allowed, size_t n);

/* 0 when every key of object `o` is one of `allowed` (n names); otherwise
 * RPX_EFORMAT with "ORIGIN: unknown key 'K' in WHERE; did you mean 'N'?" (or,
 * with no near name, "...; the keys allowed there are: a, b, c"). `where` names
 * the object ("models[0]"); NULL or "" means the top level. A non-object `o` is
 * not checked (0). */
int rpx_json_check_keys(const json_t *o, const char *const *allowed, size_t n,
                        const char *origin, const char *where, rpx_error *err);

/* "a string", "an integer", "a number", "an object", "an array", "a boolean",
 * "null" — for "expected X, got Y" messages. */
const char *rpx_json_type_name(const json_t *v);

/* 0 when `path` names an existing regular file; otherwise RPX_EIO with "PATH:
 * the file does not exist; give the path of WHAT", "PATH: is a folder, not a
 * file; ...", "PATH: is a FIFO (named pipe), not a regular file ..." (checked
 * before any open, which would block) or the system's reason. */
int rpx_user_file_check(const char *path, const char *what, rpx_error *err);

/* Parse the JSON file at `path` (jansson `flags`) into *out: 0, or RPX_EIO when
 * the path does not exist ("the file does not exist"), is a folder ("is a
 * folder, not a file") or cannot be read (the system's reason), RPX_EFORMAT
 * when it is not valid JSON (line and column). `what` names the expected
 * content in the fix ("a batch manifest"). *out is NULL on error. */
int rpx_json_load_user_file(const char *path, size_t flags, const char *what, json_t **out,
                            rpx_error *err);

#endif
