/* src/common/output.h — output files that never cost the user a file.
 *
 * Every file rpxprof writes goes through one guard, opened before any work is
 * done (before the first timed call) and committed at the end:
 *
 *   rpx_output *o;
 *   rpx_output_options opt = {RPX_OUTPUT_REPORT, "rpxprof.profile/1", force, protect, n, "--output"};
 *   if (rpx_output_open(path, &opt, &o, &err)) -> refuse now, nothing measured
 *   ... measure ...
 *   rpx_output_commit(o, data, len, &err)   (or rpx_output_discard(o))
 *
 * What open decides:
 * - "-" streams to standard output.
 * - A symbolic link is followed to its target; the link stays.
 * - A character device or a FIFO (/dev/stdout, /dev/null, a pipe) is streamed
 *   to at commit, never renamed over; a socket, a folder or any other
 *   non-regular file is refused.
 * - A path that is one of `protect` (the inputs, a manifest, a model's files, a
 *   report being read: compared by device and inode, links followed), or
 *   with protect_folders a file that reading a protected folder reads
 *   (rpx_output_read_from_folder), is refused with RPX_EUSAGE (a bad command
 *   line), even with force.
 * - An existing regular file is replaced only when it is an rpxprof file of the
 *   same kind (see rpx_output_kind), or empty, or when force is set; otherwise
 *   refused with what is there and how to proceed (another path, or --force).
 *   A file without any write permission bit (mode 0444) is refused unless
 *   force is set. The replacement keeps the replaced file's mode.
 * - The standard output's own file (`-o /dev/stdout > f.json`) is written
 *   through fd 1, never renamed over. A FIFO is opened here, so open waits
 *   for its reader.
 * - The parent folders are created and a temporary file is created beside the
 *   target now and kept open, so an unwritable place is refused before work.
 *
 * Commit writes the data to the temporary file, flushes it and renames it
 * over the target (a stream target: writes the data to it). The handle is
 * freed by commit and discard either way. */
#ifndef RPXPROF_OUTPUT_H
#define RPXPROF_OUTPUT_H

#include <stddef.h>

#include "rpxprof/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rpx_output_kind {
    RPX_OUTPUT_REPORT = 0, /* JSON whose "schema" is `schema` (any "rpxprof." schema if NULL) */
    RPX_OUTPUT_SVG,        /* an SVG figure that rpxprof drew (its generator mark) */
    RPX_OUTPUT_NPZ,        /* an NPZ that `rpxprof inputs make` wrote (its archive comment) */
    RPX_OUTPUT_TEXT,       /* CSV/Markdown of an aggregate folder: ours when the folder
                              holds rpxprof's validation.json */
    RPX_OUTPUT_HTML        /* an HTML report that rpxprof wrote (RPX_OUTPUT_HTML_MARK) */
} rpx_output_kind;

typedef struct rpx_output_options {
    rpx_output_kind kind;
    const char *schema;           /* RPX_OUTPUT_REPORT: the schema an existing file must carry */
    int force;                    /* replace any existing regular file (never a protected one) */
    const char *const *protect;   /* paths never replaced (NULL entries are skipped) */
    size_t n_protect;
    const char *option;           /* the option that named the path, for messages ("--output") */
    int no_force;                 /* the command has no --force: messages never suggest one */
    const char *force_option;     /* how the caller spells --force in messages (NULL:
                                     "--force"; Python: "force=True") */
    int protect_folders;          /* a folder among `protect` is read as a batch or aggregate
                                     folder: the files that reading reads are protected too */
} rpx_output_options;

typedef struct rpx_output rpx_output;

/* The mark rpxprof puts in what it writes, so that it knows its own files:
 * the SVG generator comment and the NPZ archive comment. */
#define RPX_OUTPUT_SVG_MARK "<!-- rpxprof figure -->"
#define RPX_OUTPUT_NPZ_COMMENT "rpxprof inputs make"
#define RPX_OUTPUT_HTML_MARK "<!-- rpxprof report -->" /* = RPX_HTML_MARK of rpxprof/html.h */

int rpx_output_open(const char *path, const rpx_output_options *opt, rpx_output **out,
                    rpx_error *err);
/* Append `len` bytes to what the output will hold (a writer that streams its
 * text in pieces, then commits with len 0): 0, or RPX_EIO (err says why; the
 * caller then discards `o`). */
int rpx_output_write(rpx_output *o, const void *data, size_t len, rpx_error *err);
/* Write `len` bytes and move them into place; frees `o`. */
int rpx_output_commit(rpx_output *o, const void *data, size_t len, rpx_error *err);
/* The temporary file's path, for a writer that writes a file itself (libzip):
 * write it there, then call rpx_output_commit_written. */
const char *rpx_output_temp_path(const rpx_output *o);
/* Move what another writer left at rpx_output_temp_path into place; frees `o`. */
int rpx_output_commit_written(rpx_output *o, rpx_error *err);
/* Remove the temporary file; frees `o`. NULL is a no-op. */
void rpx_output_discard(rpx_output *o);
/* 1 when the output is this process's standard output ("-", /dev/stdout, or
 * the same file or pipe as fd 1): the caller keeps other text off stdout. */
int rpx_output_is_stdout(const rpx_output *o);
/* The path as given, for messages. */
const char *rpx_output_path(const rpx_output *o);

/* output_paths.c. The absolute path `path` names, links followed where it
 * exists, else the real path of its deepest existing folder and the rest
 * taken lexically; malloc'ed, NULL on failure. */
char *rpx_output_normalise(const char *path);
/* 1 when two output paths name one file: the same device and inode where
 * both exist (a character device such as /dev/null never clashes), else the
 * same normalised path; "-" only with "-". */
int rpx_output_same_file(const char *a, const char *b);
/* 1 when `file` exists and reading the folder `folder` as `rpxprof report`
 * and `aggregate` do would read it: a run report at FOLDER/TASK/MODEL.json, or
 * an aggregate folder's validation.json, summary.csv, summary.md, figure.svg. */
int rpx_output_read_from_folder(const char *folder, const char *file);

/* Write `len` bytes to `path` atomically, creating parent folders, through the
 * same guard: the data replaces only a file of its own kind (a JSON report of
 * the same schema, an SVG with RPX_OUTPUT_SVG_MARK). */
int rpx_write_file_atomic(const char *path, const void *data, size_t len, rpx_error *err);

#ifdef __cplusplus
}
#endif

#endif
