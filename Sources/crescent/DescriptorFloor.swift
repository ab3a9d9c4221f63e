#if canImport(Glibc)
import Glibc
#endif

/// The fewest open files a run starts with: NIO's event loop takes descriptors of its own (an
/// epoll set, an eventfd, a timerfd) beside the standard streams, and below this it cannot start
/// at all (it stopped on an assertion, SIGILL, with nothing said). A lower soft limit is raised
/// when the hard one allows; else the run ends saying so.
enum DescriptorFloor {
    static let minimum: rlim_t = 16

    static func check() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < minimum else { return }
        let given = limit.rlim_cur
        if limit.rlim_max >= minimum {
            limit.rlim_cur = minimum
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 { return }
        }
        ProcessIO.writeError("crescent: the open-file limit is \(given) (ulimit -n), too few to start: crescent needs at least "
                             + "\(minimum); raise it with ulimit -n \(minimum) or more\n")
        ProcessIO.exit(1)
    }
}
