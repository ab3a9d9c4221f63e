import CLua
import LuaBridge

/// The Lua strings made while one bulk value is pushed, found again by the identity of the Swift
/// string they came from.
///
/// A batch's answer repeats a few thousand texts (place, division and country names) across
/// 100,000 records. Copying a string already made from a table slot costs one array read, where
/// making it again hashes its bytes and walks the VM's string table, which the script's own
/// strings (every line it read) make large and cold.
///
/// A Swift string's two words are its bytes (a small string) or its storage's count, flags and
/// address: equal words mean equal text as long as both strings are alive. Every string keyed
/// here belongs to the value being pushed, which outlives the cache (one push), so no storage
/// address is reused while its key is held.
struct InternedStrings {
    /// The two words of a Swift string.
    private struct Key: Equatable {
        let low: UInt64
        let high: UInt64
    }

    /// Open addressing: `slots[i]` is the position in the strings table of the string whose
    /// key is `keys[i]`, 0 for an empty entry.
    private var keys: [Key]
    private var slots: [Int32]
    private var mask: Int
    private var count: Int32 = 0
    /// The absolute stack index of the table holding the strings by position.
    private let table: Int32

    /// False where a String is not two 64-bit words (then nothing is interned).
    static let isAvailable = MemoryLayout<String>.size == 2 * MemoryLayout<UInt64>.size

    /// A cache whose strings go into a new table pushed on `stack` (the caller removes it when
    /// the push is done).
    init(onto stack: LuaStack) {
        stack.newTable()
        table = stack.top
        keys = Array(repeating: Key(low: 0, high: 0), count: 1024)
        slots = Array(repeating: 0, count: 1024)
        mask = 1023
    }

    /// Pushes `string`, from the table when it was pushed before.
    mutating func push(_ string: String, onto stack: LuaStack) {
        let (low, high) = Self.words(of: string)
        let key = Key(low: low, high: high)
        var entry = Self.hash(key) & mask
        while slots[entry] != 0 {
            if keys[entry] == key {
                lua_rawgeti(stack.state, table, lua_Integer(slots[entry]))
                return
            }
            entry = (entry + 1) & mask
        }
        stack.push(string)
        count += 1
        lua_pushvalue(stack.state, -1)
        lua_rawseti(stack.state, table, lua_Integer(count))
        keys[entry] = key
        slots[entry] = count
        if Int(count) * 2 > slots.count { grow() }
    }

    /// The two words of `string` (only where ``isAvailable``): equal words are equal text while
    /// both strings are alive.
    static func words(of string: String) -> (low: UInt64, high: UInt64) {
        withUnsafeBytes(of: string) { words in
            (words.load(as: UInt64.self), words.load(fromByteOffset: 8, as: UInt64.self))
        }
    }

    private static func hash(_ key: Key) -> Int {
        // Fibonacci hashing of both words: storage addresses differ in their middle bits.
        let mixed = (key.low ^ (key.high &* 0x9E37_79B9_7F4A_7C15)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> 20)
    }

    /// Doubles the entries, placing each key again.
    private mutating func grow() {
        let oldKeys = keys, oldSlots = slots
        let capacity = slots.count * 2
        keys = Array(repeating: Key(low: 0, high: 0), count: capacity)
        slots = Array(repeating: 0, count: capacity)
        mask = capacity - 1
        for (key, slot) in zip(oldKeys, oldSlots) where slot != 0 {
            var entry = Self.hash(key) & mask
            while slots[entry] != 0 { entry = (entry + 1) & mask }
            keys[entry] = key
            slots[entry] = slot
        }
    }
}
