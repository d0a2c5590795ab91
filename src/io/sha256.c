/* io/sha256.c — owns hashing input files (the SHA-256 recorded in reports),
 * with GNU Nettle, reading 1 MiB at a time. (Nettle rather than OpenSSL:
 * initialising libcrypto's EVP layer alone costs over 3 MiB of resident
 * memory, which would dominate the profiler's own footprint.) */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "common/user_file.h"
#include "rpxprof/error.h"
#include "rpxprof/npz.h"

#define RPX__SHA256_CHUNK ((size_t)1 << 20)

int rpx_file_sha256(const char *path, char hex[65], rpx_error *err)
{
    static const char digits[] = "0123456789abcdef";
    uint8_t md[SHA256_DIGEST_SIZE];
    struct sha256_ctx ctx;
    unsigned char *buf;
    unsigned i;
    int fd, rc = 0;

    if (!path || !hex) return rpx_error_set(err, RPX_EINVAL, "rpx_file_sha256: no path given");
    hex[0] = '\0';
    if ((rc = rpx__user_file_regular(path, NULL, err)) != 0) return rc; /* a FIFO would block */
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return rpx_error_set(err, RPX_EIO, "%s: cannot open (%s); check the path", path,
                             strerror(errno));
    buf = malloc(RPX__SHA256_CHUNK);
    if (!buf) {
        close(fd);
        return rpx_error_set(err, RPX_ENOMEM, "%s: out of memory for hashing", path);
    }
    sha256_init(&ctx);
    for (;;) {
        ssize_t n = read(fd, buf, RPX__SHA256_CHUNK);
        if (n < 0) {
            if (errno == EINTR) continue;
            rc = rpx_error_set(err, RPX_EIO, "%s: cannot read (%s)", path, strerror(errno));
            goto done;
        }
        if (n == 0) break;
        sha256_update(&ctx, (size_t)n, buf);
    }
    sha256_digest(&ctx, sizeof md, md);
    for (i = 0; i < sizeof md; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
done:
    free(buf);
    close(fd);
    return rc;
}
