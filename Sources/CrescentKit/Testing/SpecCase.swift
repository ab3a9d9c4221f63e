import LuaBridge
import Model
import NIOCore
import Services
import Synchronization

/// One test as the spec file declared it.
struct SpecCase: Sendable {
    let name: String
    /// `spec/x_spec.lua:12`.
    let location: String
    let isPending: Bool
    /// False when `--filter` or the tags leave it out.
    let isSelected: Bool
    /// Set for a describe whose body raised (busted reports it under the describe's name, and its
    /// tests are not run): the error.
    var blockError: String? = nil
    /// Set for the place of a block's strict hooks (`setup`, `strict_teardown`…) when none of its
    /// tests runs: how many entries after it are the block's. Busted runs the hooks anyway, and
    /// reports a setup that fails instead of those entries.
    var hooksOf: Int? = nil
    /// The place a block with strict hooks keeps before its tests, unused since some of them run
    /// (the tests' runs run the hooks): nothing to run or report.
    var isUnusedPlace = false
}

/// What chooses the tests that run, as busted chooses: `--filter` (a Lua pattern on full names),
/// and the `#tag` words in full names (`--tags`, `--exclude-tags`). Every host of the run knows
/// it, since what ran before a describe's body (the chosen tests) is what that body sees.
public struct SpecSelection: Sendable {
    /// Lua patterns of which a full name must match one, if any: bytes, as a name need not be UTF-8.
    public var filters: [[UInt8]] = []
    /// Run only tests with one of these tags (all when empty).
    public var tags: [[UInt8]] = []
    /// Leave out tests with one of these tags.
    public var excludedTags: [[UInt8]] = []
    /// Where ``tags`` came from, as messages name it: `--tags`, or `.busted's tags`.
    public var tagsOrigin = "--tags"
    /// Where ``excludedTags`` came from: `--exclude-tags`, or `.busted's exclude-tags`.
    public var excludedTagsOrigin = "--exclude-tags"

    public init(filters: [[UInt8]] = [], tags: [[UInt8]] = [], excludedTags: [[UInt8]] = []) {
        self.filters = filters
        self.tags = tags
        self.excludedTags = excludedTags
    }
}

/// How one test went.
struct SpecOutcome: Sendable {
    let passed: Bool
    let message: String
    let output: String
    /// As busted tells them: passed, failed (an assertion in the body), error (anything else),
    /// pending (`pending()` in the body).
    var status: SpecResult.Status = .failed
    /// The name busted reports the outcome under when it is not the test's (a hook that failed:
    /// `describe-name before_each`).
    var reportedName: String? = nil
    /// True when a `setup` hook failed, so the test never ran: busted reports that once for its
    /// block, and runs none of the block's tests.
    var isSetupFailure = false
    /// An `after_each` or `teardown` hook that failed after the test: busted reports it as an entry
    /// of its own, after the test's, which keeps its own outcome.
    var afterHook: SpecHookFailure? = nil
}

/// A hook that failed after its test ran.
struct SpecHookFailure: Sendable {
    /// As busted names it: `describe-name after_each`.
    let name: String
    let message: String
    /// A `teardown` runs once after its block's last test under busted, so its failure is
    /// reported once, there; an `after_each` runs after every test.
    let isTeardown: Bool
}
