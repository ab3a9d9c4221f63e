#if canImport(Glibc)
import Glibc
#endif

/// Telling a dynamic loader by what the file is, not by its name: a copy of
/// `/lib64/ld-linux-x86-64.so.2` saved as `myld`, or a hard link to it, passed a check by name and
/// path, and `exec = ["/path/to/myld"]` then let a plugin run any program (`myld /bin/sh -c ...`).
extension PluginExecEntry {
    /// True when the file at `path` is a dynamic loader: the same file as one of
    /// ``PluginSandbox/loaders`` (device and inode: a hard link), the same bytes, or an ELF shared
    /// object with no interpreter of its own whose SONAME is a loader's (`ld-linux-x86-64.so.2`,
    /// `ld-musl-x86_64.so.1`, musl's `libc.so`). False for a file it cannot open.
    static func isLoaderFile(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return isLoaderFile(descriptor: descriptor)
    }

    /// ``isLoaderFile(_:)`` of the open file `descriptor`: what is checked is what was opened.
    static func isLoaderFile(descriptor: Int32) -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return false }
        for loader in PluginSandbox.loaders {
            var known = stat()
            guard stat(loader, &known) == 0 else { continue }
            if known.st_dev == status.st_dev && known.st_ino == status.st_ino { return true }
            if known.st_size == status.st_size && sameBytes(descriptor, loader, size: Int(status.st_size)) { return true }
        }
        guard let soname = ELFHeaders(descriptor)?.interpreterlessSoname() else { return false }
        return isLoaderName(soname) || soname == "libc.so"
    }

    /// The names loaders go by (`ld-linux-x86-64.so.2`, `ld-musl-x86_64.so.1`, `ld.so`, `ld64.so.2`).
    static func isLoaderName(_ name: String) -> Bool {
        name.hasPrefix("ld-linux") || name.hasPrefix("ld-musl") || name == "ld.so" || name.hasPrefix("ld64.so")
    }

    /// Whether the open file `descriptor` holds the same `size` bytes as the file at `other`.
    private static func sameBytes(_ descriptor: Int32, _ other: String, size: Int) -> Bool {
        let second = open(other, O_RDONLY | O_CLOEXEC)
        guard second >= 0 else { return false }
        defer { close(second) }
        var mine = [UInt8](repeating: 0, count: 65536), theirs = [UInt8](repeating: 0, count: 65536)
        var offset = 0
        // Bounded: each round reads at least one byte further, or ends.
        while offset < size {
            let count = min(mine.count, size - offset)
            guard pread(descriptor, &mine, count, off_t(offset)) == count, pread(second, &theirs, count, off_t(offset)) == count,
                  mine[0..<count] == theirs[0..<count] else { return false }
            offset += count
        }
        return true
    }
}

/// The few parts of an ELF file (32- or 64-bit, little-endian) that say whether it is a
/// loader: its type, its program headers and its dynamic section's SONAME.
private struct ELFHeaders {
    let descriptor: Int32
    let wide: Bool
    let type: UInt16
    let headerOffset: UInt64
    let headerSize: Int
    let headerCount: Int

    init?(_ descriptor: Int32) {
        self.descriptor = descriptor
        var ident = [UInt8](repeating: 0, count: 64)
        guard pread(descriptor, &ident, 64, 0) == 64, ident[0..<4] == [0x7F, 0x45, 0x4C, 0x46], ident[5] == 1 else { return nil }
        wide = ident[4] == 2
        func number(_ at: Int, _ width: Int) -> UInt64 {
            (0..<width).reduce(UInt64(0)) { $0 | UInt64(ident[at + $1]) << (8 * $1) }
        }
        type = UInt16(number(16, 2))
        headerOffset = wide ? number(32, 8) : number(28, 4)
        headerSize = Int(wide ? number(54, 2) : number(42, 2))
        headerCount = Int(wide ? number(56, 2) : number(44, 2))
    }

    /// Reads `width` little-endian bytes at `offset`, nil past the end.
    private func number(at offset: UInt64, _ width: Int) -> UInt64? {
        var bytes = [UInt8](repeating: 0, count: width)
        guard offset < UInt64(Int64.max), pread(descriptor, &bytes, width, off_t(offset)) == width else { return nil }
        return bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
    }

    /// The SONAME of a shared object (`ET_DYN`) that names no interpreter (`PT_INTERP`), as a
    /// loader is; nil for anything else (a program, a library with an interpreter, no SONAME).
    func interpreterlessSoname() -> String? {
        guard type == 3, headerCount > 0, headerCount <= 512, headerSize >= (wide ? 56 : 32) else { return nil }
        var loads: [(offset: UInt64, address: UInt64, size: UInt64)] = []
        var dynamic: (offset: UInt64, size: UInt64)?
        for index in 0..<headerCount {
            let at = headerOffset + UInt64(index * headerSize)
            guard let kind = number(at: at, 4) else { return nil }
            let field = { (wideAt: UInt64, narrowAt: UInt64) in wide ? number(at: at + wideAt, 8) : number(at: at + narrowAt, 4) }
            guard let offset = field(8, 4), let address = field(16, 8), let size = field(32, 16) else { return nil }
            switch kind {
            case 1: loads.append((offset, address, size))
            case 2: dynamic = (offset, size)
            case 3: return nil
            default: break
            }
        }
        guard let dynamic else { return nil }
        let entrySize: UInt64 = wide ? 16 : 8
        var soname: UInt64?, table: UInt64?
        // Bounded by the section's size, and at most 4,096 entries.
        for index in 0..<min(dynamic.size / entrySize, 4096) {
            let at = dynamic.offset + index * entrySize
            guard let tag = number(at: at, wide ? 8 : 4), let value = number(at: at + entrySize / 2, wide ? 8 : 4) else { return nil }
            if tag == 0 { break }
            if tag == 14 { soname = value }
            if tag == 5 { table = value }
        }
        guard let soname, let table,
              let load = loads.first(where: { table >= $0.address && table - $0.address < $0.size }) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 256)
        let start = load.offset + (table - load.address) + soname
        let count = start < UInt64(Int64.max) ? pread(descriptor, &bytes, bytes.count, off_t(start)) : -1
        guard count > 0, let end = bytes[0..<count].firstIndex(of: 0) else { return nil }
        return String(decoding: bytes[0..<end], as: UTF8.self)
    }
}
