/// A compiled Lua 5.4 chunk (what `lua_dump` writes), read far enough to copy it with some of its
/// nested functions replaced by an empty one.
///
/// `crescent test` runs a spec file once per test, each in a fresh VM. Loading the whole compiled
/// file in each makes a file of N tests cost N² (6,000 tests: 4.5 ms of loading per test). The
/// bodies of the other tests are never called in a test's VM, so its copy replaces them with one
/// empty function: loading it costs what the test's own describe blocks cost.
///
/// The format is ldump.c's for Lua 5.4 (the version this module links): a header, then each
/// function as source, lines, sizes, code, constants, upvalues, nested functions and debug
/// information. A function refers to its nested functions only by index, from its `CLOSURE`
/// instructions, which the copy renumbers.
///
/// ```swift
/// let chunk = LuaBinaryChunk(bytes)           // nil when not a Lua 5.4 chunk of this build
/// let pruner = chunk.map { LuaBinaryChunk.Pruner($0, candidates: [LuaBinaryChunk.key(12, 14), LuaBinaryChunk.key(15, 17)]) }
/// let copy = pruner?.pruned(keeping: [LuaBinaryChunk.key(15, 17)])   // the function of lines 12-14 emptied
/// ```
public struct LuaBinaryChunk: Sendable {
    /// A function of the chunk: where its parts lie in the bytes.
    struct Function: Sendable {
        /// Its lines (``LuaBinaryChunk/key(_:_:)``).
        let key: Int
        /// Its number in the chunk, in the order functions begin.
        let index: Int
        let headerRange: Range<Int>        // source .. maxstacksize
        let codeRange: Range<Int>          // the instructions, after their count
        /// Where its `CLOSURE` instructions are, from the start of the code.
        let closures: [Int]
        let constantsRange: Range<Int>     // constants and upvalues, with their counts
        let children: [Function]
        let debugRange: Range<Int>
        let range: Range<Int>              // the whole function
    }

    /// The key of a function defined on lines `first` to `last` (`debug.getinfo(f, "S")`'s
    /// linedefined and lastlinedefined).
    public static func key(_ first: Int, _ last: Int) -> Int { first << 32 | last & 0xffff_ffff }

    let bytes: [UInt8]
    let headerEnd: Int
    let main: Function
    /// How many functions of the chunk have each key.
    let keyCounts: [Int: Int]
    /// How many functions the chunk has.
    let functionCount: Int

    /// Reads `bytes`; nil when they are not a chunk this reader understands.
    public init?(_ bytes: [UInt8]) {
        // ESC "Lua", version 5.4, format 0, LUAC_DATA, sizes of Instruction, lua_Integer,
        // lua_Number, then LUAC_INT and LUAC_NUM (8 bytes each), then the main function's
        // upvalue count.
        let signature: [UInt8] = [0x1b, 0x4c, 0x75, 0x61, 0x54, 0x00, 0x19, 0x93, 0x0d, 0x0a, 0x1a, 0x0a, 4, 8, 8]
        guard bytes.count > 32, Array(bytes[0..<signature.count]) == signature else { return nil }
        self.bytes = bytes
        headerEnd = 32
        var reader = Reader(bytes: bytes, offset: headerEnd)
        var counts: [Int: Int] = [:]
        var count = 0
        guard let main = reader.function(counts: &counts, count: &count, depth: 0), reader.offset == bytes.count else { return nil }
        self.main = main
        keyCounts = counts
        functionCount = count
    }

    /// Copies of one chunk with some of `candidates` (keys of functions nothing but their own
    /// copy calls) replaced; a candidate that another function of the chunk shares is kept.
    public struct Pruner: Sendable {
        let chunk: LuaBinaryChunk
        let candidates: Set<Int>
        /// By function index: whether a candidate is nested in it (at any depth).
        let holdsCandidate: [Bool]

        public init(_ chunk: LuaBinaryChunk, candidates: Set<Int>) {
            self.chunk = chunk
            let unique = candidates.filter { chunk.keyCounts[$0] == 1 }
            self.candidates = unique
            var holds = [Bool](repeating: false, count: chunk.functionCount)
            func mark(_ function: Function) -> Bool {
                var found = false
                for child in function.children where mark(child) || unique.contains(child.key) { found = true }
                holds[function.index] = found
                return found
            }
            _ = mark(chunk.main)
            holdsCandidate = holds
        }

        /// The chunk with every candidate not in `keep` replaced by one empty function; nil when nothing was replaced.
        public func pruned(keeping keep: Set<Int>) -> [UInt8]? {
            guard !candidates.isEmpty else { return nil }
            var output: [UInt8] = []
            output.reserveCapacity(chunk.bytes.count)
            output.append(contentsOf: chunk.bytes[0..<chunk.headerEnd])
            var replaced = 0
            chunk.write(chunk.main, into: &output, holds: holdsCandidate,
                        stub: { key in candidates.contains(key) && !keep.contains(key) }, replaced: &replaced)
            return replaced > 0 ? output : nil
        }
    }

    private func write(_ function: Function, into output: inout [UInt8], holds: [Bool], stub: (Int) -> Bool, replaced: inout Int) {
        guard holds[function.index] else {
            output.append(contentsOf: bytes[function.range])
            return
        }
        // Kept children keep their order; every replaced one becomes the one empty function last.
        var newIndex: [Int] = []
        var kept: [Function] = []
        var anyStub = false
        for child in function.children {
            if stub(child.key) {
                newIndex.append(-1)
                anyStub = true
            } else {
                newIndex.append(kept.count)
                kept.append(child)
            }
        }
        let stubIndex = kept.count
        output.append(contentsOf: bytes[function.headerRange])
        Reader.writeSize(function.codeRange.count / 4, into: &output)
        // The code copied whole, then each CLOSURE renumbered in place (Bx: the top 17 bits).
        let codeStart = output.count
        output.append(contentsOf: bytes[function.codeRange])
        for closure in function.closures {
            let at = codeStart + closure
            var instruction = UInt32(output[at]) | UInt32(output[at + 1]) << 8 | UInt32(output[at + 2]) << 16 | UInt32(output[at + 3]) << 24
            let index = Int(instruction >> 15)
            let target = index < newIndex.count && newIndex[index] >= 0 ? newIndex[index] : stubIndex
            instruction = instruction & 0x7fff | UInt32(target) << 15
            output[at + 1] = UInt8(instruction >> 8 & 0xff)
            output[at + 2] = UInt8(instruction >> 16 & 0xff)
            output[at + 3] = UInt8(instruction >> 24)
        }
        output.append(contentsOf: bytes[function.constantsRange])
        Reader.writeSize(kept.count + (anyStub ? 1 : 0), into: &output)
        for child in kept { write(child, into: &output, holds: holds, stub: stub, replaced: &replaced) }
        if anyStub {
            replaced += newIndex.count { $0 < 0 }
            // No source (the parent's), lines 0, no vararg, 2 registers, one RETURN0, nothing else.
            output.append(contentsOf: [0x80, 0x80, 0x80, 0, 0, 2, 0x81, Self.returnOpcode, 0x00, 0x01, 0x00,
                                       0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80])
        }
        output.append(contentsOf: bytes[function.debugRange])
    }

    /// OP_CLOSURE and OP_RETURN0 in Lua 5.4's lopcodes.h.
    static let closureOpcode: UInt32 = 79
    static let returnOpcode: UInt8 = 71

    /// Reads ldump.c's encoding.
    private struct Reader {
        let bytes: [UInt8]
        var offset: Int

        /// dumpSize: 7 bits a byte, most significant first, the last byte marked with 0x80.
        mutating func size() -> Int? {
            var value = 0
            for _ in 0..<10 {
                guard offset < bytes.count else { return nil }
                let byte = bytes[offset]
                offset += 1
                value = value << 7 | Int(byte & 0x7f)
                if byte & 0x80 != 0 { return value }
            }
            return nil
        }

        static func writeSize(_ value: Int, into output: inout [UInt8]) {
            var groups: [UInt8] = []
            var rest = value
            repeat {
                groups.append(UInt8(rest & 0x7f))
                rest >>= 7
            } while rest != 0
            groups[0] |= 0x80
            output.append(contentsOf: groups.reversed())
        }

        mutating func skip(_ count: Int) -> Bool {
            guard count >= 0, offset + count <= bytes.count else { return false }
            offset += count
            return true
        }

        mutating func string() -> Bool {
            guard let size = size() else { return false }
            return size == 0 || skip(size - 1)
        }

        mutating func function(counts: inout [Int: Int], count: inout Int, depth: Int) -> Function? {
            guard depth < 200 else { return nil }
            let index = count
            count += 1
            let start = offset
            guard string(), let lineDefined = size(), let lastLineDefined = size(), offset + 3 <= bytes.count else { return nil }
            offset += 3                                                    // parameters, vararg, registers
            let headerRange = start..<offset
            guard let codeCount = size() else { return nil }
            let codeStart = offset
            guard skip(codeCount * 4) else { return nil }
            let codeRange = codeStart..<offset
            var closures: [Int] = []
            for at in stride(from: codeStart, to: offset, by: 4) where UInt32(bytes[at]) & 0x7f == LuaBinaryChunk.closureOpcode {
                closures.append(at - codeStart)
            }
            let constantsStart = offset
            guard let constantCount = size() else { return nil }
            for _ in 0..<constantCount {
                guard offset < bytes.count else { return nil }
                let tag = bytes[offset]
                offset += 1
                switch tag {
                case 0x03, 0x13: guard skip(8) else { return nil }        // integer, float
                case 0x04, 0x14: guard string() else { return nil }       // short, long string
                case 0x00, 0x01, 0x11: break                               // nil, false, true
                default: return nil
                }
            }
            guard let upvalueCount = size(), skip(upvalueCount * 3) else { return nil }
            let constantsRange = constantsStart..<offset
            guard let childCount = size() else { return nil }
            var children: [Function] = []
            let key = LuaBinaryChunk.key(lineDefined, lastLineDefined)
            for _ in 0..<childCount {
                guard let child = function(counts: &counts, count: &count, depth: depth + 1) else { return nil }
                children.append(child)
            }
            let debugStart = offset
            guard let lineCount = size(), skip(lineCount), let absoluteCount = size() else { return nil }
            for _ in 0..<absoluteCount { guard size() != nil, size() != nil else { return nil } }
            guard let localCount = size() else { return nil }
            for _ in 0..<localCount { guard string(), size() != nil, size() != nil else { return nil } }
            guard let nameCount = size() else { return nil }
            for _ in 0..<nameCount { guard string() else { return nil } }
            counts[key, default: 0] += 1
            return Function(key: key, index: index, headerRange: headerRange, codeRange: codeRange, closures: closures,
                            constantsRange: constantsRange,
                            children: children, debugRange: debugStart..<offset, range: start..<offset)
        }
    }
}
