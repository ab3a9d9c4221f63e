/*
 * The child side of a confined process plugin: see include/CSandbox.h. Between fork and execve the
 * child makes only system calls (async-signal-safe), and reports a failed step to the parent
 * through a close-on-exec pipe, then exits with 127: a program is never run with less confinement
 * than was asked for.
 */
#define _GNU_SOURCE
#include "CSandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Landlock's user API, written out here: the system's <linux/landlock.h> may predate the ABI the
 * kernel offers (Debian's stops at ABI 2; the network and scope parts came with ABI 4 and 6). */
#define CR_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define CR_LANDLOCK_RULE_PATH_BENEATH 1
#define CR_LANDLOCK_RULE_NET_PORT 2
#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_TRUNCATE (1ULL << 14)
#define FS_IOCTL_DEV (1ULL << 15)
#define NET_BIND_TCP (1ULL << 0)
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

struct cr_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct cr_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

struct cr_net_port_attr {
    uint64_t allowed_access;
    uint64_t port;
};

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
/* fchmodat2 (Linux 6.6) has the same number on every architecture; older headers lack it. */
#define CR_NR_fchmodat2 452
/* Linux 6.13's *xattrat calls, the same number on x86_64 and aarch64. */
#define CR_NR_setxattrat 463
#define CR_NR_removexattrat 466
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

int crescent_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, CR_LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

/* Every filesystem right the kernel's ABI knows: all of them are handled (denied unless a rule
 * allows), so a right the ruleset forgets cannot be a way out. */
static uint64_t handled_fs(int abi) {
    uint64_t rights = (1ULL << 13) - 1;      /* ABI 1: execute .. make_sym */
    if (abi >= 2) rights |= 1ULL << 13;      /* refer */
    if (abi >= 3) rights |= FS_TRUNCATE;
    if (abi >= 5) rights |= FS_IOCTL_DEV;
    return rights;
}

/* The rights that apply to a file that is not a folder (Landlock refuses the others on one). */
static uint64_t file_rights(int abi) {
    return handled_fs(abi) & (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV);
}

/* ---- Child side: system calls only ----------------------------------------------------------- */

/* What the child tells the parent when a step fails: the step and errno. */
struct failure {
    int step;
    int code;
};

enum step {
    STEP_SESSION = 1, STEP_DESCRIPTORS, STEP_DIRECTORY, STEP_NAMESPACE, STEP_ID_MAP, STEP_RESOLVER, STEP_RLIMIT,
    STEP_NO_NEW_PRIVS, STEP_LANDLOCK, STEP_LANDLOCK_RULE, STEP_SECCOMP, STEP_EXEC, STEP_INIT, STEP_IDENTITY
};

static const char *step_name(int step) {
    switch (step) {
    case STEP_SESSION: return "setsid";
    case STEP_DESCRIPTORS: return "dup2 of stdin, stdout, stderr";
    case STEP_DIRECTORY: return "chdir to the plugin folder";
    case STEP_NAMESPACE: return "unshare of a network or mount namespace";
    case STEP_ID_MAP: return "writing the user namespace's id maps";
    case STEP_RESOLVER: return "unmounting the scratch tmpfs of the name resolution settings";
    case STEP_RLIMIT: return "setrlimit";
    case STEP_NO_NEW_PRIVS: return "prctl(PR_SET_NO_NEW_PRIVS)";
    case STEP_LANDLOCK: return "Landlock ruleset";
    case STEP_LANDLOCK_RULE: return "Landlock rule";
    case STEP_SECCOMP: return "seccomp filter";
    case STEP_EXEC: return "exec";
    case STEP_INIT: return "fork of the program under its PID namespace's init";
    case STEP_IDENTITY: return "becoming the unprivileged user 65534 (nobody) with the two capabilities that reach the host user's files";
    default: return "?";
    }
}

static _Noreturn void fail(int report, int step) {
    struct failure failure = { step, errno };
    ssize_t ignored = write(report, &failure, sizeof failure);
    (void)ignored;
    _exit(127);
}

/* Writes `text` to the file at `path` (one write: /proc's id map files take a single write). */
static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t length = (ssize_t)strlen(text);
    ssize_t written = write(fd, text, (size_t)length);
    close(fd);
    return written == length ? 0 : -1;
}

/* "ID ID 1\n" without snprintf (not async-signal-safe). */
static void id_map(char *out, unsigned id) {
    char digits[16];
    int count = 0;
    do { digits[count++] = (char)('0' + id % 10); id /= 10; } while (id != 0);
    char *cursor = out;
    for (int round = 0; round < 2; round++) {
        for (int i = count - 1; i >= 0; i--) *cursor++ = digits[i];
        *cursor++ = ' ';
    }
    *cursor++ = '1';
    *cursor++ = '\n';
    *cursor = '\0';
}

/* Sets both limits of `resource` to `value`, or to the hard limit the program inherited when that
 * is lower: only a process with CAP_SYS_RESOURCE over the host may raise a hard limit (under a
 * container's `nofile=128` every process plugin failed to start with "setrlimit: Operation not
 * permitted"), and a lower bound is within what was asked. */
static int limit(int resource, unsigned long long value) {
    if (value == 0) return 0;
    struct rlimit inherited;
    if (getrlimit(resource, &inherited) == 0 && inherited.rlim_max != RLIM_INFINITY && inherited.rlim_max < (rlim_t)value)
        value = (unsigned long long)inherited.rlim_max;
    struct rlimit bound = { (rlim_t)value, (rlim_t)value };
    return setrlimit(resource, &bound);
}

/* In the program's own mount namespace, /etc/resolv.conf reads as `spec->resolver_text` (the host's
 * name servers with `options use-vc`: name lookups over TCP port 53, which Landlock can allow, as
 * datagram sockets are refused). The text is written to a tmpfs mounted over the plugin folder for
 * the moment (the working directory, entered before, stays the real folder) (a file the plugin could not have planted), bound read-only over the file, and the
 * tmpfs detached again. A step that fails leaves the host's file in place: lookups fail then, no
 * confinement is lost. Only the detach must succeed (else the folder would read as the tmpfs). */
static void bind_resolver(const crescent_sandbox *spec, int report) {
    if (spec->resolver_text == NULL || spec->resolver_folder == NULL || spec->resolver_scratch == NULL) return;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return;
    if (mount("none", spec->resolver_folder, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=0700") != 0) return;
    int fd = open(spec->resolver_scratch, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
    if (fd >= 0) {
        size_t length = strlen(spec->resolver_text);
        ssize_t written = write(fd, spec->resolver_text, length);
        close(fd);
        if (written == (ssize_t)length
            && mount(spec->resolver_scratch, "/etc/resolv.conf", NULL, MS_BIND, NULL) == 0) {
            mount(NULL, "/etc/resolv.conf", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
        }
    }
    if (umount2(spec->resolver_folder, MNT_DETACH) != 0) fail(report, STEP_RESOLVER);
}

/* The paths come resolved (no links) from the host, so each is opened without following any: a
 * link met now was swapped in since the host resolved it (a granted path re-pointed as the program
 * starts), and its rule is left out (the program may reach less, never elsewhere), as a path that
 * no longer exists is. */
static int add_paths(int ruleset, const char *const *paths, int count, uint64_t rights, int abi) {
    for (int i = 0; i < count; i++) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        int fd = (int)syscall(SYS_openat2, AT_FDCWD, paths[i], &how, sizeof how);
        if (fd < 0) {
            if (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ELOOP) continue;
            return -1;
        }
        struct stat status;
        if (fstat(fd, &status) != 0) {
            close(fd);
            return -1;
        }
        struct cr_path_beneath_attr rule = {
            .allowed_access = S_ISDIR(status.st_mode) ? rights : rights & file_rights(abi),
            .parent_fd = fd,
        };
        long added = rule.allowed_access == 0 ? 0 : syscall(SYS_landlock_add_rule, ruleset, CR_LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        close(fd);
        if (added != 0) return -1;
    }
    return 0;
}

/* Rules by descriptor: each file was opened and checked by the host, and its rule is on what was
 * opened, whatever its path leads to now. */
static int add_descriptors(int ruleset, const int *fds, int count, uint64_t rights, int abi) {
    for (int i = 0; i < count; i++) {
        struct stat status;
        if (fstat(fds[i], &status) != 0) return -1;
        struct cr_path_beneath_attr rule = {
            .allowed_access = S_ISDIR(status.st_mode) ? rights : rights & file_rights(abi),
            .parent_fd = fds[i],
        };
        if (rule.allowed_access != 0 && syscall(SYS_landlock_add_rule, ruleset, CR_LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
            return -1;
    }
    return 0;
}

static void restrict_filesystem_and_network(const crescent_sandbox *spec, int report) {
    int abi = crescent_landlock_abi();
    if (abi < 1) {
        errno = EOPNOTSUPP;
        fail(report, STEP_LANDLOCK);
    }
    uint64_t all = handled_fs(abi);
    struct cr_ruleset_attr attributes = { .handled_access_fs = all };
    size_t size = sizeof(uint64_t);
    if (abi >= 4) {
        attributes.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
        size = 2 * sizeof(uint64_t);
    }
    if (abi >= 6) {
        /* No signals to processes outside the sandbox (the host), no abstract Unix sockets. */
        attributes.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
        size = sizeof attributes;
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attributes, size, 0);
    if (ruleset < 0) fail(report, STEP_LANDLOCK);
    uint64_t read = FS_READ_FILE | FS_READ_DIR;
    if (add_paths(ruleset, spec->read_paths, spec->read_count, read, abi) != 0
        || add_paths(ruleset, spec->exec_paths, spec->exec_count, read | FS_EXECUTE, abi) != 0
        || add_descriptors(ruleset, spec->exec_fds, spec->exec_fd_count, read | FS_EXECUTE, abi) != 0
        || add_paths(ruleset, spec->write_paths, spec->write_count, all & ~FS_EXECUTE, abi) != 0
        || add_descriptors(ruleset, spec->write_fds, spec->write_fd_count, all & ~FS_EXECUTE, abi) != 0)
        fail(report, STEP_LANDLOCK_RULE);
    if (abi >= 4) {
        for (int i = 0; i < spec->port_count; i++) {
            struct cr_net_port_attr rule = { .allowed_access = NET_CONNECT_TCP, .port = spec->ports[i] };
            if (syscall(SYS_landlock_add_rule, ruleset, CR_LANDLOCK_RULE_NET_PORT, &rule, 0) != 0)
                fail(report, STEP_LANDLOCK_RULE);
        }
    }
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) fail(report, STEP_LANDLOCK);
    close(ruleset);
}

/* The seccomp filter: no ptrace, no io_uring (its requests would pass by this filter), no new
 * namespaces (unshare, setns, clone with a CLONE_NEW* flag); sockets
 * only of the internet families as TCP streams, and netlink (the interface list name lookups
 * read): no Unix sockets (a host's remote control socket is one), no datagram or raw sockets
 * (Landlock has rules for TCP only: a plugin granted one TCP port could send UDP anywhere), no
 * other family (vsock, for one, is not confined by a network namespace); without
 * `allow_processes` no new processes (threads stay allowed). Any other architecture's system
 * calls end the process. */
static void filter_system_calls(const crescent_sandbox *spec, int report) {
#if defined(__x86_64__)
    const unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    const unsigned arch = AUDIT_ARCH_AARCH64;
#else
#error "the plugin sandbox knows x86_64 and aarch64"
#endif
#define ERRNO(code) (SECCOMP_RET_ERRNO | ((code) & SECCOMP_RET_DATA))
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LOAD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
#define LOAD_ARG(n) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[n]))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define REFUSE(nr, code) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, ERRNO(code))
/* System call `nr` with S_ISUID or S_ISGID in its argument `arg` fails with EPERM; the number is
 * loaded again after. */
#define NO_SET_ID(nr, arg) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), LOAD_ARG(arg), \
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, S_ISUID | S_ISGID, 0, 1), BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)), LOAD_NR
    struct sock_filter head[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        LOAD_NR,
#if defined(__x86_64__)
        /* x32 system calls (numbers from 0x40000000) reach the same kernel code. */
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#endif
        REFUSE(__NR_ptrace, EPERM),
        REFUSE(__NR_io_uring_setup, EPERM),
        /* No namespaces of its own making: a user namespace of its own (which it could enter to
         * hold every capability there) only widens what of the kernel it can reach. clone3 passes
         * its flags in memory the filter cannot read: ENOSYS makes libc use clone. */
        REFUSE(__NR_unshare, EPERM),
        REFUSE(__NR_setns, EPERM),
        REFUSE(__NR_clone3, ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
        LOAD_ARG0,
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER
                 | CLONE_NEWPID | CLONE_NEWNET, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
        LOAD_NR,
        /* No change to a file's mode, owner, times or extended attributes, anywhere: Landlock
         * governs opening, making and removing files, not these, so a plugin asking nothing
         * could `chmod 666 ~/.ssh/id_ed25519`, fake mtimes, or (a host run as root, whose root
         * the plugin's user namespace maps) write a `security.capability` that gives a program
         * root's powers for every local user (fourth permissions attack X15, X13). A descriptor
         * does not tell a granted file from a read-only one, so these are refused on descriptors
         * too. New files still take the mode they are made with. */
#ifdef __NR_chmod
        REFUSE(__NR_chmod, EPERM),
#endif
        REFUSE(__NR_fchmod, EPERM),
        REFUSE(__NR_fchmodat, EPERM),
        REFUSE(CR_NR_fchmodat2, EPERM),
#ifdef __NR_chown
        REFUSE(__NR_chown, EPERM),
#endif
#ifdef __NR_lchown
        REFUSE(__NR_lchown, EPERM),
#endif
        REFUSE(__NR_fchown, EPERM),
        REFUSE(__NR_fchownat, EPERM),
#ifdef __NR_utime
        REFUSE(__NR_utime, EPERM),
#endif
#ifdef __NR_utimes
        REFUSE(__NR_utimes, EPERM),
#endif
#ifdef __NR_futimesat
        REFUSE(__NR_futimesat, EPERM),
#endif
        REFUSE(__NR_utimensat, EPERM),
        REFUSE(__NR_setxattr, EPERM),
        REFUSE(__NR_lsetxattr, EPERM),
        REFUSE(__NR_fsetxattr, EPERM),
        REFUSE(CR_NR_setxattrat, EPERM),
        REFUSE(__NR_removexattr, EPERM),
        REFUSE(__NR_lremovexattr, EPERM),
        REFUSE(__NR_fremovexattr, EPERM),
        REFUSE(CR_NR_removexattrat, EPERM),
        /* No set-user-ID or set-group-ID file: where the host runs as root the plugin's files are
         * root's, and such a file in its data folder would run as root for whoever may reach it.
         * The mode is an argument wherever a file is made; openat2 hides it in memory: ENOSYS
         * (libc does not need it). */
        REFUSE(__NR_openat2, ENOSYS),
#ifdef __NR_open
        NO_SET_ID(__NR_open, 2),
#endif
#ifdef __NR_creat
        NO_SET_ID(__NR_creat, 1),
#endif
        NO_SET_ID(__NR_openat, 3),
#ifdef __NR_mknod
        NO_SET_ID(__NR_mknod, 1),
#endif
        NO_SET_ID(__NR_mknodat, 2),
        /* socket(domain, type, protocol): the jumps below count the instructions they skip. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 15),
        LOAD_ARG0,
        /* Netlink only for routes (the interface list name lookups read): with `net` the plugin
         * shares the host's network namespace, where NETLINK_SOCK_DIAG listed every TCP
         * connection of the machine and uevent and audit sockets opened (fourth permissions
         * attack X6). */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 3),
        LOAD_ARG(2),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NETLINK_ROUTE, 0, 9),
        ALLOW,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 6),
        /* The type without SOCK_NONBLOCK and SOCK_CLOEXEC must be SOCK_STREAM... */
        LOAD_ARG(1),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 3),
        /* ...and the protocol TCP (0 picks it); not MPTCP, SCTP or another Landlock may not cover. */
        LOAD_ARG(2),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, ERRNO(EACCES)),
        ALLOW,
    };
    struct sock_filter processes[] = {
#ifdef __NR_fork
        REFUSE(__NR_fork, EPERM),
#endif
#ifdef __NR_vfork
        REFUSE(__NR_vfork, EPERM),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
        LOAD_ARG0,
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)),
    };
    struct sock_filter tail[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
#undef REFUSE
#undef NO_SET_ID
#undef ALLOW
#undef LOAD_ARG
#undef LOAD_ARG0
#undef LOAD_NR
#undef ERRNO
    enum { HEAD = sizeof head / sizeof head[0], PROCESSES = sizeof processes / sizeof processes[0] };
    struct sock_filter program[HEAD + PROCESSES + 1];
    size_t count = 0;
    for (size_t i = 0; i < HEAD; i++) program[count++] = head[i];
    if (!spec->allow_processes) {
        for (size_t i = 0; i < PROCESSES; i++) program[count++] = processes[i];
    }
    program[count++] = tail[0];
    struct sock_fprog fprog = { .len = (unsigned short)count, .filter = program };
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) fail(report, STEP_SECCOMP);
}

/* The signals the namespace's init passes on to the program: those the host (or a user) sends a
 * process plugin to stop it. The init of a PID namespace receives only the signals it handles. */
static const int forwarded_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT };
static volatile pid_t init_program;

/* To the program's process group (what it started in it too, as the host's signal to a plugin's
 * group always reached), or to the program alone before it has made that group. */
static void forward_signal(int signal) {
    if (init_program > 0 && kill(-init_program, signal) != 0) kill(init_program, signal);
}
/* Sets every signal to its default action with the raw system call: the C library's sigaction
 * refuses the two it keeps for itself (32 and 33, for thread cancellation and set*id), which a
 * host started by posix_spawn inherits as ignored (glibc's child ignores them unless told
 * otherwise). The kernel's struct is all zeros for SIG_DFL on every architecture, whatever its
 * field order; it refuses SIGKILL and SIGSTOP, which are never ignored anyway. */
static void default_every_signal(void) {
    unsigned long long kernel_action[4];
    memset(kernel_action, 0, sizeof kernel_action);
    for (int number = 1; number < _NSIG; number++)
        syscall(SYS_rt_sigaction, number, kernel_action, NULL, (size_t)((_NSIG - 1) / 8));
}

static void note_child(int signal) { (void)signal; }

/* A copy of the process made without the C library's fork handlers: after the raw clone that made
 * this process, a lock of the host's (malloc's) another thread held then may be taken forever, and
 * fork() would wait for it. Only system calls follow. */
static pid_t plain_fork(void) {
    return (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
}

/* PID 1 of the program's PID namespace: it reaps, passes the stop signals on, and ends when the
 * program ends (with its status; 128 + N for a signal, as the init cannot die of its own signal)
 * or when the host is gone (`lifeline` reads end-of-file: only the host holds its write end, so
 * also after kill -9 of the host). Its end makes the kernel kill every process of the namespace:
 * a child that double-forked, or left the group with setsid, goes with the program. */
static _Noreturn void namespace_init(pid_t program, int lifeline) {
    init_program = program;
    /* Nothing of the host's stays open here: a pipe end held would keep a reader waiting. */
    if (lifeline > 0) syscall(SYS_close_range, 0U, (unsigned)lifeline - 1, 0U);
    syscall(SYS_close_range, (unsigned)lifeline + 1, ~0U, 0U);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    sigfillset(&action.sa_mask);
    action.sa_handler = forward_signal;
    sigset_t waiting;
    sigfillset(&waiting);
    for (size_t i = 0; i < sizeof forwarded_signals / sizeof forwarded_signals[0]; i++) {
        sigaction(forwarded_signals[i], &action, NULL);
        sigdelset(&waiting, forwarded_signals[i]);
    }
    action.sa_handler = note_child;
    action.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &action, NULL);
    sigdelset(&waiting, SIGCHLD);
    /* Bounded by the program's life: each round reaps or waits for a signal or the host's end. */
    for (;;) {
        int status;
        pid_t done;
        while ((done = waitpid(-1, &status, WNOHANG)) > 0) {
            if (done == program) _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        }
        if (done < 0 && errno == ECHILD) _exit(127);
        struct pollfd host = { lifeline, POLLIN, 0 };
        if (ppoll(&host, 1, NULL, &waiting) > 0) _exit(137);
    }
}

/* The user a confined program of a host run as root runs as: 65534 (nobody), the same number inside
 * its user namespace and outside. */
#define CR_NOBODY 65534

/* Where the host runs as root, the program runs as `nobody` (mapped by the host, see host_maps):
 * the kernel exempts root (and only root) from RLIMIT_NPROC, so as root a plugin's fork bomb made
 * 2,916 processes in 6 s past its limit of 64 (fourth permissions attack X4). It keeps two
 * capabilities, ambient so that they survive the exec: CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH,
 * which act only on files whose owner and group the namespace maps (root's: the host user's), so
 * it still reads and writes its own folder, its data folder and its granted paths of root's
 * (Landlock decides which) as a plugin of a root host always could; files it makes are nobody's.
 * Without CAP_SETUID it cannot become root again. Raw system calls: glibc's setresuid would signal
 * the host's threads, which it still believes to be its own after the raw clone. */
static void become_nobody(int report) {
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0
        || syscall(SYS_setresuid, (long)CR_NOBODY, (long)CR_NOBODY, (long)CR_NOBODY) != 0)
        fail(report, STEP_IDENTITY);
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    uint32_t kept = (1U << CAP_DAC_OVERRIDE) | (1U << CAP_DAC_READ_SEARCH);
    data[0].effective = kept;
    data[0].permitted = kept;
    data[0].inheritable = kept;
    if (syscall(SYS_capset, &header, data) != 0
        || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_DAC_OVERRIDE, 0, 0) != 0
        || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_DAC_READ_SEARCH, 0, 0) != 0)
        fail(report, STEP_IDENTITY);
}

/* `maps` is the read end of a pipe on which the host says it wrote the id maps ('n': the program
 * runs as nobody, 's': as the host's own user), or -1 when the child maps its own user. */
static _Noreturn void child(const crescent_sandbox *spec, int report, uid_t uid, gid_t gid, int lifeline, int maps) {
    /* A session of its own: a process group the host kills whole, and no controlling terminal
     * (so /dev/tty does not reach the user's terminal). */
    if (setsid() < 0) fail(report, STEP_SESSION);
    if (dup2(spec->stdin_fd, 0) < 0 || dup2(spec->stdout_fd, 1) < 0 || dup2(spec->stderr_fd, 2) < 0)
        fail(report, STEP_DESCRIPTORS);
    /* Nothing else of the host's crosses the exec (most of its descriptors are close-on-exec
     * already; this makes it all of them). */
    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    for (int i = 0; i < spec->keep_fd_count; i++)
        if (fcntl(spec->keep_fds[i], F_SETFD, 0) != 0) fail(report, STEP_DESCRIPTORS);
    if (chdir(spec->directory) != 0) fail(report, STEP_DIRECTORY);
    if (spec->confine) {
        /* Always a user namespace of its own (made by the clone, with the PID namespace this
         * process is the init of): the capabilities a plugin run as root keeps are then only
         * over what that namespace owns, never over the host's clock, reboot, raw sockets or
         * network settings. With `net` granted it keeps the host's network namespace (owned by
         * the initial user namespace, so still beyond its capabilities). */
        int as_nobody = 0;
        if (maps >= 0) {
            char word = 0;
            ssize_t got;
            do { got = read(maps, &word, 1); } while (got < 0 && errno == EINTR);
            close(maps);
            if (got != 1) {
                if (got == 0) errno = EPERM;
                fail(report, STEP_ID_MAP);
            }
            as_nobody = word == 'n';
        } else {
            char map[48];
            id_map(map, (unsigned)uid);
            if (write_file("/proc/self/uid_map", map) != 0) fail(report, STEP_ID_MAP);
            if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT) fail(report, STEP_ID_MAP);
            id_map(map, (unsigned)gid);
            if (write_file("/proc/self/gid_map", map) != 0) fail(report, STEP_ID_MAP);
        }
        int namespaces = (spec->isolate_network ? CLONE_NEWNET : 0) | (spec->resolver_text ? CLONE_NEWNS : 0);
        if (namespaces != 0 && unshare(namespaces) != 0) fail(report, STEP_NAMESPACE);
        bind_resolver(spec, report);
        /* No program from memory: its PID namespace's memfd files cannot be executed (vm.memfd_noexec
         * 2, Linux 6.3; per PID namespace, set by its owner, this init, and only raised after). A
         * plugin granted `exec = ["sleep"]` copied /usr/bin/id into a memfd and ran it through
         * /proc/self/fd/N, a program not in `exec` and in no Landlock rule (fourth permissions
         * attack X1). An older kernel has no such setting: nothing to do there. */
        write_file("/proc/sys/vm/memfd_noexec", "2");
        pid_t program = plain_fork();
        if (program < 0) fail(report, STEP_INIT);
        if (program > 0) namespace_init(program, lifeline);
        /* A group of its own, as every program the host starts has (the host's signals to the
         * init's group reach it through the init). */
        if (setpgid(0, 0) != 0) fail(report, STEP_INIT);
        if (limit(RLIMIT_DATA, spec->memory_bytes) != 0 || limit(RLIMIT_NOFILE, spec->max_files) != 0
            || limit(RLIMIT_NPROC, spec->max_processes) != 0)
            fail(report, STEP_RLIMIT);
        if (as_nobody) become_nobody(report);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(report, STEP_NO_NEW_PRIVS);
        restrict_filesystem_and_network(spec, report);
        filter_system_calls(spec, report);
    }
    /* Every signal at its default action, as a program expects to begin (the host ignores or
     * handles some; what started the host may have left others ignored, which exec hands on). */
    default_every_signal();
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (spec->run_program_fd)
        syscall(SYS_execveat, spec->program_fd, "", spec->argv, spec->envp, AT_EMPTY_PATH);
    else
        execve(spec->program, spec->argv, spec->envp);
    fail(report, STEP_EXEC);
}

/* The host's end of every namespace init's lifeline: a pipe made once, both ends close-on-exec
 * and kept for the host's life; the inits read the other end, which ends when the host does. */
static int lifeline_ends[2] = { -1, -1 };
static pthread_once_t lifeline_once = PTHREAD_ONCE_INIT;
static void make_lifeline(void) {
    if (pipe2(lifeline_ends, O_CLOEXEC) != 0) { lifeline_ends[0] = -1; lifeline_ends[1] = -1; }
}

/* The id maps of the confined child `pid`, written by a host run as root (only a writer with
 * CAP_SETUID over the parent namespace may map more than its own user): the namespace's root is
 * root (so files of root's stay within the reach of the two capabilities the program keeps) and
 * 65534 is nobody, which the program becomes (see become_nobody). Answers 'n', or 's' when that map
 * is refused (a root without CAP_SETUID: the child maps root alone, as for any other user, and
 * RLIMIT_NPROC binds only where that root is not the machine's), or 0 when no map could be written. */
static char host_maps(pid_t pid, gid_t gid) {
    char path[64], map[48];
    snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
    if (write_file(path, "deny") != 0 && errno != ENOENT) return 0;
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    id_map(map, (unsigned)gid);
    if (write_file(path, map) != 0) return 0;
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    if (write_file(path, "0 0 1\n65534 65534 1\n") == 0) return 'n';
    return write_file(path, "0 0 1\n") == 0 ? 's' : 0;
}

int crescent_sandbox_spawn(const crescent_sandbox *spec, char *error, unsigned long error_size) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(error, error_size, "pipe: %s", strerror(errno));
        return -1;
    }
    uid_t uid = getuid();
    gid_t gid = getgid();
    /* A host run as root writes its confined child's id maps itself (host_maps). */
    int maps[2] = { -1, -1 };
    if (spec->confine && uid == 0 && geteuid() == 0 && pipe2(maps, O_CLOEXEC) != 0) {
        close(report[0]);
        close(report[1]);
        snprintf(error, error_size, "pipe: %s", strerror(errno));
        return -1;
    }
    pthread_once(&lifeline_once, make_lifeline);
    if (spec->confine && lifeline_ends[0] < 0) {
        close(report[0]);
        close(report[1]);
        snprintf(error, error_size, "pipe: the host's lifeline to its plugins' namespaces could not be made (too many open files?)");
        return -1;
    }
    /* No signal handler of the host may run in the child between fork and exec. */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    /* Confined: a new user and PID namespace from the start (this process is the namespace's
     * init), made by the raw clone, as fork() cannot make a PID namespace the child is in. */
    pid_t pid = spec->confine
        ? (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | CLONE_NEWPID | SIGCHLD), 0UL, 0UL, 0UL, 0UL)
        : fork();
    if (pid == 0) {
        close(report[0]);
        if (maps[1] >= 0) close(maps[1]);
        child(spec, report[1], uid, gid, lifeline_ends[0], maps[0]);
    }
    int fork_error = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    close(report[1]);
    if (maps[0] >= 0) {
        close(maps[0]);
        /* No answer (the pipe closed) makes the child fail at STEP_ID_MAP, reported below. */
        char word = pid > 0 ? host_maps(pid, gid) : 0;
        if (word != 0) {
            ssize_t ignored = write(maps[1], &word, 1);
            (void)ignored;
        }
        close(maps[1]);
    }
    if (pid < 0) {
        close(report[0]);
        snprintf(error, error_size, "%s: %s", spec->confine ? "clone of a user and PID namespace" : "fork", strerror(fork_error));
        return -1;
    }
    struct failure failure;
    ssize_t count;
    do { count = read(report[0], &failure, sizeof failure); } while (count < 0 && errno == EINTR);
    close(report[0]);
    if (count == (ssize_t)sizeof failure) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        snprintf(error, error_size, "%s: %s", step_name(failure.step), strerror(failure.code));
        return -1;
    }
    return pid;
}
