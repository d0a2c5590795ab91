/* user_file.h — the files a user names for rpxprof to read (inputs, inputs
 * folders' entries, manifests, ONNX models, reports, request bodies, GPU spec
 * files): each must be a regular file, checked with stat before any blocking
 * open, so that a FIFO (named pipe) never leaves rpxprof waiting for a writer
 * and a device is never read without end. Library code: nothing is printed. */
#ifndef RPX_COMMON_USER_FILE_H
#define RPX_COMMON_USER_FILE_H

#include "rpxprof/error.h"

/* 0 when `path` is a regular file (links followed), a folder, or cannot be
 * looked at (the caller's open then names the reason as it always has);
 * otherwise RPX_EIO with "LABEL: is a FIFO (named pipe), not a regular file;
 * ..." (a character device, a block device, a socket). `label` is what the
 * message starts with ("--inputs ff.npz", or the path when NULL). */
int rpx__user_file_regular(const char *path, const char *label, rpx_error *err);

/* A file read whole into memory (--prompts, --body, --body-template) is
 * refused above this size, so that a huge or endless file cannot grow
 * rpxprof without bound (docs/robustness.md). */
#define RPX_USER_FILE_MAX_BYTES (256LL << 20)

/* rpx__user_file_regular, and RPX_EIO with "LABEL: is N bytes, more than
 * rpxprof reads whole (256 MiB) ..." when the regular file is larger than
 * max_bytes. */
int rpx__user_file_bounded(const char *path, const char *label, long long max_bytes,
                           rpx_error *err);

#endif
