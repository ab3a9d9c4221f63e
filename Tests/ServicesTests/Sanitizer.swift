import Glibc

/// The sanitizer these tests run under, as `make sanitize` names it (`CRESCENT_SANITIZER`:
/// `address`, `thread`), or nil in a plain build. A test that measures time skips that
/// measurement under one: the sanitizer's slowdown (2 to 15 times), not our code, would decide
/// it. The rest of such a test still runs.
enum Sanitizer {
    static let active: String? = getenv("CRESCENT_SANITIZER").map { String(cString: $0) }
}
