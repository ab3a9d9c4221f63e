import CLua
import LuaBridge

/// Field names crossing the bridge, kept in both forms so a record's names are not made again
/// for every record.
///
/// Converting a record makes a Swift string of each field name (a UTF-8 check and a copy per
/// key), and pushing one makes a Lua string of each (hashing its bytes and finding it in the
/// VM's string table). The same few names come back record after record, so each direction
/// keeps the names it made, found again by identity:
/// - from Lua, by the Lua string's address: Lua keeps each short text in one string object;
/// - to Lua, by the Swift string's two words: its bytes (a small string) or its storage's
///   address (see ``InternedStrings``).
///
/// An identity holds only while its string lives: once freed, another string may be made at
/// the same address. So every string whose identity is cached is kept alive by the cache (the
/// Swift string in its entry, the Lua string in the slot of the anchor table that the entry
/// owns, ``BindingTables/fieldNameAnchors``) until its entry is replaced. A name has two entries
/// it can be in, picked by its identity; a new name replaces the older of the two.
///
/// A class over fixed buffers, so the binding's conversions use it without copying it in and
/// out and without exclusivity checks per key. It belongs to one binding and is used on its
/// loop only.
final class FieldNameCache {
    private struct FromLua {
        var address: UnsafeRawPointer?
        var name: String
        /// Whether the name is ASCII: distinct Lua names then stay distinct as Swift compares them.
        var isASCII: Bool
        /// The anchor table's slot holding the Lua string.
        var anchor: lua_Integer
    }

    private struct ToLua {
        var low: UInt64
        var high: UInt64
        /// Keeps the storage whose address `low`/`high` may hold alive; nil for an empty entry.
        var name: String?
        var anchor: lua_Integer
    }

    /// Field names longer than this are made each time (Lua interns only short strings, and
    /// longer names are rare enough not to keep alive).
    static let longestCached = 40
    /// Two entries a name may be in (so two names of one record that hash alike do not take
    /// turns), 64 such pairs per direction: room for the names of several record shapes, and
    /// little to fill when each binding is made.
    private static let entryCount = 128

    /// The anchor table's registry reference: slots 1...128 for `fromLua`, 129...256 for `toLua`.
    private let anchors: LuaRef
    private let fromLua: UnsafeMutablePointer<FromLua>
    private let toLua: UnsafeMutablePointer<ToLua>
    /// False where a String is not two 64-bit words: names are then pushed as made.
    private static let pushesByIdentity = InternedStrings.isAvailable

    init(anchors: LuaRef) {
        self.anchors = anchors
        fromLua = .allocate(capacity: Self.entryCount)
        toLua = .allocate(capacity: Self.entryCount)
        for entry in 0..<Self.entryCount {
            (fromLua + entry).initialize(to: FromLua(address: nil, name: "", isASCII: true, anchor: lua_Integer(entry + 1)))
            (toLua + entry).initialize(to: ToLua(low: 0, high: 0, name: nil, anchor: lua_Integer(Self.entryCount + entry + 1)))
        }
    }

    deinit {
        fromLua.deinitialize(count: Self.entryCount)
        fromLua.deallocate()
        toLua.deinitialize(count: Self.entryCount)
        toLua.deallocate()
    }

    /// The field name at `index` (a string) and whether it is ASCII, nil when it is not valid
    /// UTF-8. Needs two free stack slots.
    func name(at index: Int32, in stack: LuaStack) -> (text: String, isASCII: Bool)? {
        var length = 0
        guard let pointer = lua_tolstring(stack.state, index, &length) else { return nil }
        let address = UnsafeRawPointer(pointer)
        let bytes = UnsafeRawBufferPointer(start: address, count: length)
        guard length <= Self.longestCached else { return ModelBinding.decoded(bytes) }
        let first = Self.pair(UInt64(UInt(bitPattern: address)) >> 4)
        if fromLua[first].address == address { return (fromLua[first].name, fromLua[first].isASCII) }
        if fromLua[first + 1].address == address { return (fromLua[first + 1].name, fromLua[first + 1].isASCII) }
        guard let (name, isASCII) = ModelBinding.decoded(bytes) else { return nil }
        // The pair's older entry goes; the newer one moves to its place.
        let anchor = fromLua[first + 1].anchor
        fromLua[first + 1] = fromLua[first]
        fromLua[first] = FromLua(address: address, name: name, isASCII: isASCII, anchor: anchor)
        let absolute = stack.absolute(index)
        anchors.push(onto: stack)                                    // ... anchors
        lua_pushvalue(stack.state, absolute)                         // ... anchors name
        lua_rawseti(stack.state, -2, anchor)                         // ... anchors
        stack.pop()
        return (name, isASCII)
    }

    /// Pushes the anchor table, which ``push(_:onto:anchorsAt:)`` takes from the stack.
    func pushAnchors(onto stack: LuaStack) {
        anchors.push(onto: stack)
    }

    /// Pushes `name` as a Lua string, the one made before when it was pushed before; the anchor
    /// table (``pushAnchors(onto:)``) is at the absolute index `anchorsIndex`. Needs two free
    /// stack slots.
    func push(_ name: String, onto stack: LuaStack, anchorsAt anchorsIndex: Int32) {
        guard Self.pushesByIdentity, name.utf8.count <= Self.longestCached else { return stack.push(name) }
        let (low, high) = InternedStrings.words(of: name)
        let first = Self.pair(low ^ (high &* 0x9E37_79B9_7F4A_7C15))
        for entry in first...first + 1 where toLua[entry].low == low && toLua[entry].high == high && toLua[entry].name != nil {
            lua_rawgeti(stack.state, anchorsIndex, toLua[entry].anchor)
            return
        }
        let anchor = toLua[first + 1].anchor
        toLua[first + 1] = toLua[first]
        toLua[first] = ToLua(low: low, high: high, name: name, anchor: anchor)
        stack.push(name)                                             // ... name
        lua_pushvalue(stack.state, -1)                               // ... name name
        lua_rawseti(stack.state, anchorsIndex, anchor)               // ... name
    }

    /// The first entry of the pair for `key`: Fibonacci hashing, the product's top 6 bits.
    private static func pair(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 58) << 1
    }
}
