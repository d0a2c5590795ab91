/* callable.c — owns the grammar the two callable kinds share (shared
 * objects' PATH:SYMBOL, Python's MODULE:FUNCTION): a ':SYMBOL' that is a
 * function name, and what an identifier is. It asks nothing of the table. */
#include <ctype.h>
#include <string.h>

#include "loader/kinds.h"
#include "rpxprof/error.h"

int rpx__kind_identifier(const char *s, size_t n, int dots)
{
    size_t i;
    if (n == 0 || s[0] == '.' || s[n - 1] == '.' || isdigit((unsigned char)s[0])) return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '.' && dots && s[i + 1] != '.' && !isdigit((unsigned char)s[i + 1])) continue;
        if (!(isalnum(c) || c == '_')) return 0;
    }
    return 1;
}

int rpx__kind_python_file(const char *s, size_t n)
{
    return n > 3 && memcmp(s + n - 3, ".py", 3) == 0;
}

int rpx__kind_check_callable(const char *spec, rpx_error *err)
{
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || !colon[1])
        return rpx_error_set(err, RPX_EINVAL, "--model %s: expected " RPX_KIND_EXPECTED
                             " (missing ':SYMBOL'?)", spec);
    if (!rpx__kind_identifier(colon + 1, strlen(colon + 1), 0))
        return rpx_error_set(err, RPX_EINVAL,
                             "--model %s: '%s' is not a valid function name (letters, digits, "
                             "'_', not starting with a digit)",
                             spec, colon + 1);
    return 0;
}
