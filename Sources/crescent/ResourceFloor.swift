#if canImport(Glibc)
import Glibc
#endif

/// The least of each resource limit a run starts with. A lower soft limit is raised when the
/// hard one allows; else the run ends saying which limit and how to raise it, with status 1,
/// rather than stopping on a signal or hanging with nothing said.
enum ResourceFloor {
    /// Open files: NIO's event loop takes descriptors of its own (an epoll set, an eventfd, a
    /// timerfd) beside the standard streams; below this it cannot start at all (it stopped on
    /// an assertion, SIGILL, with nothing said).
    static let descriptors: rlim_t = 16
    /// `ulimit -d`, in KiB (the unit `ulimit` takes). Each thread's stack (8 MiB, from `ulimit
    /// -s`) comes out of it beside the executable's own writable data (38 MiB, debug and release
    /// alike), and libdispatch retries a thread it cannot make for ever: under 100–120 MB a run
    /// hung, deaf to SIGTERM, or crashed (SIGSEGV, `std::bad_alloc`). A run with a process plugin
    /// started from 60 MiB on (measured); this leaves room for about ten more threads (a busy
    /// run has five).
    static let dataKiB: rlim_t = 128 * 1024
    /// `ulimit -v`, in KiB: the executable's code and the address space its threads' heaps
    /// reserve count too (such a run started from 150 MiB on).
    static let addressSpaceKiB: rlim_t = 256 * 1024

    static func check() {
        raise(RLIMIT_NOFILE, to: descriptors, unit: 1) { given in
            "the open-file limit is \(given) (ulimit -n), too few to start: crescent needs at least \(descriptors); "
                + "raise it with ulimit -n \(descriptors) or more"
        }
        raise(RLIMIT_DATA, to: dataKiB, unit: 1024) { given in
            "the data size limit is \(given) KiB (ulimit -d), too small to start: crescent needs at least \(dataKiB) KiB "
                + "(\(dataKiB / 1024) MiB); raise it with ulimit -d \(dataKiB) or more"
        }
        raise(RLIMIT_AS, to: addressSpaceKiB, unit: 1024) { given in
            "the virtual memory limit is \(given) KiB (ulimit -v), too small to start: crescent needs at least \(addressSpaceKiB) KiB "
                + "(\(addressSpaceKiB / 1024) MiB); raise it with ulimit -v \(addressSpaceKiB) or more"
        }
    }

    /// Raises `resource`'s soft limit to `minimum` (in `unit`s of the limit) when it is lower,
    /// or ends the run with `message(the soft limit in units)`.
    private static func raise(_ resource: __rlimit_resource, to minimum: rlim_t, unit: rlim_t, message: (rlim_t) -> String) {
        var limit = rlimit()
        let floor = minimum * unit
        guard getrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0, limit.rlim_cur < floor else { return }
        let given = limit.rlim_cur / unit
        if limit.rlim_max >= floor {
            limit.rlim_cur = floor
            if setrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0 { return }
        }
        ProcessIO.writeError("crescent: " + message(given) + "\n")
        ProcessIO.exit(1)
    }
}
