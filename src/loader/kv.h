/* kv.h — a kind's options as name = value pairs (rpx_kv, plugins.h): the
 * host writes them from its own struct through a table of fields, the
 * plugin reads them back by name into its own copy, with typed getters, and
 * refuses a name it does not know. A new option is one line of the kind's
 * field table; the plugin ABI does not change. */
#ifndef RPX_LOADER_KV_H
#define RPX_LOADER_KV_H

#include <stddef.h>

#include "loader/plugins.h"
#include "rpxprof/error.h"

typedef enum rpx_kv_field_type {
    RPX_KVF_TEXT = 1,             /* const char * */
    RPX_KVF_DOUBLE,               /* double */
    RPX_KVF_LONG,                 /* long */
    RPX_KVF_INT,                  /* int */
    RPX_KVF_ULL,                  /* unsigned long long */
    RPX_KVF_TEXTS                 /* const char *const * at offset, size_t count at count_at:
                                     one pair per element, the name repeated */
} rpx_kv_field_type;

typedef struct rpx_kv_field {
    const char *name;
    rpx_kv_field_type type;
    size_t offset;
    size_t count_at;              /* RPX_KVF_TEXTS only */
} rpx_kv_field;

/* The pairs of the fields of `src` that are set (not NULL, not 0): a
 * malloc'ed list (free items with free()), or -1 out of memory. */
int rpx__kv_write(const rpx_kv_field *fields, size_t n_fields, const void *src,
                  rpx_kv_list *out);
/* Read `kv` into `dst` (zeroed first; fields not given stay 0). A name of
 * no field or a value of the wrong type: RPX_EINVAL naming `who`, the name
 * and what it takes. A TEXTS field gets a malloc'ed array (free it). */
int rpx__kv_read(const rpx_kv_field *fields, size_t n_fields, const char *who,
                 const rpx_kv_list *kv, void *dst, size_t dst_size, rpx_error *err);
/* Typed getters by name (the last pair of that name): 1 when found with the
 * type asked, else 0 and *out untouched. */
int rpx__kv_text(const rpx_kv_list *kv, const char *name, const char **out);
int rpx__kv_number(const rpx_kv_list *kv, const char *name, double *out);
int rpx__kv_integer(const rpx_kv_list *kv, const char *name, long long *out);

#endif
