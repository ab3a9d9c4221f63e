import LuaBridge
import Model

/// A spec file's layout as the host that listed its tests saw it (testing.lua's `runner.plan`),
/// and what it gives each test's host: the describe calls that host need not run, and the file
/// compiled without the other tests' inline bodies. With both, a test's host costs about what its
/// own describe blocks cost, not the whole file: a file of N tests is no longer N² (issue 32,
/// item 19).
struct SpecPlan {
    /// One describe call, numbered from 1 in the order the file makes them.
    struct Describe {
        /// The numbers of the first and last test declared inside it (last < first when none).
        let first: Int
        let last: Int
        /// How many describe calls it makes inside, at any depth.
        let nested: Int
        /// The number of the describe call it is inside; 0 at the top of the file.
        let parent: Int
        /// Its body's key, when written inline (``LuaBinaryChunk/key(_:_:)``).
        let key: Int?

        func holds(_ test: Int) -> Bool { first <= test && test <= last }
    }

    let describes: [Describe]
    /// By test number - 1: the key of its body, when written inline.
    let testKeys: [Int?]
    let pruner: LuaBinaryChunk.Pruner?

    /// Reads the plan `value` (nil when it is not one) for the file compiled to `compiled`.
    init?(_ value: Value, compiled: [UInt8]?) {
        guard let describeValues = Self.items(value["describes"]), let testValues = Self.items(value["tests"]) else { return nil }
        var describes: [Describe] = []
        for item in describeValues {
            guard case .array(let fields) = item, fields.count == 5, let first = fields[0].integerValue, let last = fields[1].integerValue,
                  let nested = fields[2].integerValue, let parent = fields[3].integerValue else { return nil }
            describes.append(Describe(first: Int(first), last: Int(last), nested: Int(nested), parent: Int(parent),
                                      key: Self.key(fields[4])))
        }
        self.describes = describes
        testKeys = testValues.map(Self.key)
        let candidates = Set(describes.compactMap(\.key) + testKeys.compactMap { $0 })
        pruner = compiled.flatMap(LuaBinaryChunk.init).map { LuaBinaryChunk.Pruner($0, candidates: candidates) }
    }

    /// The items of a Lua sequence as converted (an empty table converts as an empty object).
    private static func items(_ value: Value) -> [Value]? {
        switch value {
        case .array(let items): items
        case .object(let fields) where fields.isEmpty: []
        default: nil
        }
    }

    /// "12:14" as a key.
    private static func key(_ value: Value) -> Int? {
        guard let text = value.stringValue else { return nil }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let first = Int(parts[0]), let last = Int(parts[1]) else { return nil }
        return LuaBinaryChunk.key(first, last)
    }

    /// The describe calls the host of test `test` (numbered from 1) meets and need not run: by
    /// number, the last test number they declare and how many describe calls they make inside.
    func skips(forTest test: Int) -> [Int: (last: Int, nested: Int)] {
        var skips: [Int: (last: Int, nested: Int)] = [:]
        for (index, describe) in describes.enumerated() where !describe.holds(test) {
            let met = describe.parent == 0 || describes.indices.contains(describe.parent - 1) && describes[describe.parent - 1].holds(test)
            if met { skips[index + 1] = (describe.last, describe.nested) }
        }
        return skips
    }

    /// The compiled file for the host of test `test` (numbered from 1): the inline bodies of the
    /// other tests, and of the describe blocks that do not hold it, replaced by an empty function.
    /// Nil when the whole file is needed.
    func chunk(forTest test: Int) -> [UInt8]? {
        guard let pruner else { return nil }
        var keep: Set<Int> = []
        for describe in describes where describe.holds(test) {
            if let key = describe.key { keep.insert(key) }
        }
        if testKeys.indices.contains(test - 1), let key = testKeys[test - 1] { keep.insert(key) }
        return pruner.pruned(keeping: keep)
    }
}
