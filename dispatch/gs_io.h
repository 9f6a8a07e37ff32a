/* File output the tune cache, the signature record and the message sink
 * share: a write that a signal or a short write does not cut in two. */
#ifndef GS_IO_H
#define GS_IO_H

#include <stddef.h>

/* Write all of buf to fd, going on after EINTR and short writes: 0, or -1
 * (errno says why) when the file takes no more. */
int gs_write_all(int fd, const void *buf, size_t len);

#endif
