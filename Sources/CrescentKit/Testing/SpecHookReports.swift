/// What a spec file's hooks that failed report, counted as busted counts them though each test
/// runs its block's hooks in a host of its own: a `setup` that fails is one entry for its block
/// (whose tests do not run), a `teardown` that fails is one entry after the block's last test,
/// and an `after_each` that fails is an entry after each test it followed.
struct SpecHookReports {
    /// The `setup` failures reported so far, by name (`describe-name setup`).
    private var setups: Set<String> = []
    /// The `teardown` failures of blocks whose tests may still come, by name.
    private var teardowns: [SpecResult] = []

    /// True the first time the setup failure `name` is seen in the file: it is reported then
    /// only.
    mutating func firstSetupFailure(_ name: String) -> Bool {
        setups.insert(name).inserted
    }

    /// What to report right after a test: an `after_each` failure at once; a `teardown` failure
    /// is held until its block's tests are done (the latest host's one, as busted runs it after
    /// the last).
    mutating func afterTest(_ failure: SpecResult?, isTeardown: Bool) -> [SpecResult] {
        guard let failure else { return [] }
        guard isTeardown else { return [failure] }
        teardowns.removeAll { $0.name == failure.name }
        teardowns.append(failure)
        return []
    }

    /// The held teardown failures whose blocks are done before the test named `name` (all of
    /// them at the file's end, nil), innermost block first.
    mutating func teardownsDone(before name: String?) -> [SpecResult] {
        let done = teardowns.filter { held in
            guard let name else { return true }
            // The held name is the block's and the hook's word (`teardown`, `strict_teardown`).
            // A file-level teardown (no block name) runs once the file is done.
            guard let space = held.name.lastIndex(of: " ") else { return false }
            return !name.hasPrefix(String(held.name[..<space]) + " ")
        }
        teardowns.removeAll { held in done.contains { $0.name == held.name } }
        return done.sorted { $0.name.count > $1.name.count }
    }
}
