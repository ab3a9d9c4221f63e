/*
 * Starting a process plugin's program confined by the kernel (DESIGN.md, Plugins > Permissions).
 *
 * Swift cannot run between fork and exec (its runtime may take locks another thread holds), so the
 * whole child side lives here: fork, then only system calls (setsid, dup2, chdir, unshare,
 * setrlimit, prctl, Landlock, seccomp) and execve. Every path and argument is prepared by the
 * caller before the fork.
 */
#ifndef CRESCENT_SANDBOX_H
#define CRESCENT_SANDBOX_H

/* No system header here: Swift would take the types they declare (timespec, ...) as this module's. */

/* What one program may do. Paths are absolute and already resolved by the caller; a path that does
 * not exist is skipped. */
typedef struct crescent_sandbox {
    const char *program;              /* the executable, an absolute path */
    char *const *argv;                /* NULL-terminated */
    char *const *envp;                /* NULL-terminated: only what the program may see */
    const char *directory;            /* its working directory */
    int stdin_fd, stdout_fd, stderr_fd;
    int confine;                      /* 0: only the process group and the descriptors (unsandboxed) */
    const char *const *read_paths;    /* read files and list folders beneath */
    int read_count;
    const char *const *exec_paths;    /* read and execute */
    int exec_count;
    const int *exec_fds;              /* read and execute, each the file the host opened and checked (a
                                       * rule by what was opened: a file swapped in at its path since
                                       * gets no right) */
    int exec_fd_count;
    int program_fd;                   /* see run_program_fd */
    int run_program_fd;               /* 0: exec `program` by its path; 1: exec the open file program_fd
                                       * (execveat), the very file the host checked (for a `#!` script,
                                       * its interpreter, opened and checked by the host) */
    const int *keep_fds;              /* descriptors left open across the exec (a `#!` script's, which
                                       * its interpreter reads as /dev/fd/N) */
    int keep_fd_count;
    const char *const *write_paths;   /* read, write, create, remove beneath */
    int write_count;
    const int *write_fds;             /* the same, each a folder the host opened and checked (the
                                       * plugin's data folder: a link swapped in since gets no right) */
    int write_fd_count;
    const unsigned short *ports;            /* TCP ports it may connect to (Landlock ABI >= 4) */
    int port_count;
    int isolate_network;              /* a new network namespace without interfaces */
    const char *resolver_text;        /* NULL, or what /etc/resolv.conf reads as for the program (in a
                                       * mount namespace of its own); only where that file exists */
    const char *resolver_folder;      /* an existing folder a tmpfs is mounted over briefly to hold it */
    const char *resolver_scratch;     /* the file for it in that folder */
    int allow_processes;              /* 0: fork, vfork and clone of a process fail with EPERM */
    unsigned long long memory_bytes;            /* RLIMIT_DATA; 0 leaves it */
    unsigned long long max_files;               /* RLIMIT_NOFILE; 0 leaves it */
    unsigned long long max_processes;           /* RLIMIT_NPROC; 0 leaves it */
} crescent_sandbox;

/* The Landlock ABI version the kernel offers, or 0 when it offers none (old kernel, disabled). */
int crescent_landlock_abi(void);

/* Starts the program as `spec` says, in its own session and process group, with every signal at
 * its default action and none blocked. Returns its pid, or -1 with `error` holding what failed
 * (the step and strerror) when the child could not get as far as exec: nothing unconfined ever
 * runs. */
int crescent_sandbox_spawn(const crescent_sandbox *spec, char *error, unsigned long error_size);

/* Opening beneath a folder (beneath.c): `relative` is resolved from the folder `root` and every
 * step of it (links included) must stay inside `root`, checked by the kernel during the open
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS); an empty `relative` opens `root` itself (a
 * resolved path: with RESOLVE_NO_SYMLINKS, any link met then was swapped in since and fails with
 * -ELOOP). `flags` are open(2)'s (O_CLOEXEC added),
 * `mode` is for O_CREAT. Each answers a descriptor (open) or 0, or -errno: -EXDEV when a step
 * leads outside, -ENOSYS on a kernel before 5.6. */
int crescent_open_beneath(const char *root, const char *relative, int flags, unsigned mode);
/* Removes the file (or else the empty folder) `relative` beneath `root`, as C's remove does. */
int crescent_remove_beneath(const char *root, const char *relative);
/* Renames `from` beneath `from_root` to `to` beneath `to_root`. */
int crescent_rename_beneath(const char *from_root, const char *from, const char *to_root, const char *to);

#endif
