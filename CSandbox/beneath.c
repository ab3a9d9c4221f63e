/*
 * Opening a file of a Lua plugin so that the file checked is the file opened (see
 * include/CSandbox.h). The host resolves and checks a path, then opens it again: a link swapped in
 * between would lead the open elsewhere. So the open starts from a descriptor of the granted
 * folder and the kernel refuses, during that very open, any step that leaves the folder
 * (openat2 with RESOLVE_BENEATH, Linux 5.6): nothing outside is ever opened, created or truncated.
 */
#define _GNU_SOURCE
#include "CSandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static int open_in(int folder, const char *relative, int flags, unsigned mode, unsigned long long resolve) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = resolve;
    long fd;
    do { fd = syscall(SYS_openat2, folder, relative, &how, sizeof how); } while (fd < 0 && errno == EINTR);
    return fd < 0 ? -errno : (int)fd;
}

int crescent_open_beneath(const char *root, const char *relative, int flags, unsigned mode) {
    /* The granted path itself (a granted file, say): it was resolved, so no step of it is a link
     * unless one was swapped in since, which the kernel then refuses. */
    if (relative[0] == '\0') {
        int fd = open_in(AT_FDCWD, root, flags, mode, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        return fd == -ELOOP ? -EXDEV : fd;
    }
    /* The folder itself without following links too: it was resolved when the plugin started,
     * so a link on its way is one swapped in since (a granted folder `granted/sub` moved away and
     * `granted/sub -> /` made in its place by a plugin that may write `granted`), which would
     * lead the whole open elsewhere (fourth permissions attack X8, a granted path re-pointed). */
    int folder = open_in(AT_FDCWD, root, O_PATH | O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    if (folder == -ELOOP) return -EXDEV;
    if (folder < 0) return folder;
    int fd = open_in(folder, relative, flags, mode, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
    close(folder);
    return fd;
}

/* The folder holding the last component of `relative`, opened beneath `root`, and that component. */
static int parent_in(const char *root, const char *relative, char *parent, size_t size, const char **last) {
    const char *slash = strrchr(relative, '/');
    if (slash == NULL) {
        snprintf(parent, size, ".");
        *last = relative;
    } else {
        if ((size_t)(slash - relative) + 1 > size) return -ENAMETOOLONG;
        memcpy(parent, relative, (size_t)(slash - relative));
        parent[slash - relative] = '\0';
        *last = slash + 1;
    }
    if (**last == '\0' || strcmp(*last, ".") == 0 || strcmp(*last, "..") == 0) return -EINVAL;
    return crescent_open_beneath(root, parent[0] ? parent : ".", O_PATH | O_DIRECTORY, 0);
}

int crescent_remove_beneath(const char *root, const char *relative) {
    char parent[4096];
    const char *last;
    int folder = parent_in(root, relative, parent, sizeof parent, &last);
    if (folder < 0) return folder;
    /* As C's remove: a file, or else an empty folder. */
    int result = unlinkat(folder, last, 0);
    if (result != 0 && (errno == EISDIR || errno == EPERM)) result = unlinkat(folder, last, AT_REMOVEDIR);
    int code = result == 0 ? 0 : -errno;
    close(folder);
    return code;
}

int crescent_rename_beneath(const char *from_root, const char *from, const char *to_root, const char *to) {
    char from_parent[4096], to_parent[4096];
    const char *from_last, *to_last;
    int source = parent_in(from_root, from, from_parent, sizeof from_parent, &from_last);
    if (source < 0) return source;
    int target = parent_in(to_root, to, to_parent, sizeof to_parent, &to_last);
    if (target < 0) {
        close(source);
        return target;
    }
    int code = renameat(source, from_last, target, to_last) == 0 ? 0 : -errno;
    close(source);
    close(target);
    return code;
}
