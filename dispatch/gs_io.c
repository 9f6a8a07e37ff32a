#include "gs_io.h"

#include <errno.h>
#include <unistd.h>

int gs_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        const ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
