import Glibc

/// The few glibc functions the process and files services need that Swift's Glibc module does
/// not show (their headers are not in its module map), found once by name in the running C library.
///
/// Each is looked up with `dlsym` and called through a `@convention(c)` type that matches its C
/// prototype, so a missing one (an older glibc) is a nil the caller reports, never a crash:
/// `pidfd_open` and `pipe2` are in glibc since 2.36 and 2.9, the two spawn actions since 2.29
/// and 2.34, inotify since 2.4.
package enum SystemCalls {
    /// `int pidfd_open(pid_t pid, unsigned int flags)`: a descriptor that polls readable once
    /// the process has exited (Linux 5.3).
    package static let pidfdOpen: (@convention(c) (Int32, UInt32) -> Int32)? = symbol("pidfd_open")
    /// `int pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned int flags)`: a signal
    /// to that process only, never to another that took its pid once it was reaped (Linux 5.1).
    package static let pidfdSendSignal: (@convention(c) (Int32, Int32, UnsafeMutableRawPointer?, UInt32) -> Int32)? =
        symbol("pidfd_send_signal")
    /// `int pipe2(int fds[2], int flags)`: a pipe made close-on-exec atomically, so no program
    /// another thread starts at that instant inherits it.
    static let pipe2: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32)? = symbol("pipe2")
    /// `posix_spawn_file_actions_addchdir_np(actions, path)`: the child changes folder before exec.
    static let addChdir: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32)? =
        symbol("posix_spawn_file_actions_addchdir_np")
    /// `posix_spawn_file_actions_addclosefrom_np(actions, from)`: the child closes every
    /// descriptor from `from` up before exec, whatever the parent left inheritable.
    static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        symbol("posix_spawn_file_actions_addclosefrom_np")

    /// `int inotify_init1(int flags)`.
    static let inotifyInit: (@convention(c) (Int32) -> Int32)? = symbol("inotify_init1")
    /// `int inotify_add_watch(int fd, const char *path, uint32_t mask)`.
    static let inotifyAddWatch: (@convention(c) (Int32, UnsafePointer<CChar>, UInt32) -> Int32)? = symbol("inotify_add_watch")
    /// `int inotify_rm_watch(int fd, int wd)`.
    static let inotifyRemoveWatch: (@convention(c) (Int32, Int32) -> Int32)? = symbol("inotify_rm_watch")

    private static func symbol<Function>(_ name: String) -> Function? {
        guard let library = dlopen(nil, RTLD_NOW), let address = dlsym(library, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }

    /// A pipe whose two ends are close-on-exec and non-blocking: `[read, write]`.
    package static func pipe() -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [-1, -1]
        if let pipe2 {
            guard ends.withUnsafeMutableBufferPointer({ buffer in
                // Invariant: the array has two elements, so its base address exists.
                pipe2(buffer.baseAddress!, O_CLOEXEC | O_NONBLOCK)
            }) == 0 else { return nil }
        } else {
            guard Glibc.pipe(&ends) == 0 else { return nil }
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
        }
        return (ends[0], ends[1])
    }

    /// Makes `descriptor` blocking again (the child's end of a pipe: programs expect that).
    static func setBlocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
    }
}
