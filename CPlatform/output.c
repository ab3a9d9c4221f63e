/*
 * Output through C stdio, so Lua's print and io.write (which write to C's stdout) and the host's
 * own lines share one ordered stream; stderr flushes stdout first so the two interleave as
 * written.
 */
#include "CPlatform.h"

#include <stdio.h>
#include <unistd.h>

void crescent_write_stdout(const char *bytes, size_t length) { fwrite(bytes, 1, length, stdout); }
void crescent_write_stderr(const char *bytes, size_t length) {
    fflush(stdout);
    fwrite(bytes, 1, length, stderr);
    fflush(stderr);
}
void crescent_flush_stdout(void) { fflush(stdout); }
int crescent_isatty(int fd) { return isatty(fd); }

