public import Glibc

/// The entries `readdir` returns, read where they lie.
public enum DirectoryEntry {
    /// The name of an entry `readdir` returned, as its bytes (without the NUL).
    ///
    /// Read in place: `entry.pointee.d_name` copies the whole 256-byte array, but glibc makes each
    /// record only as long as its `d_reclen`, so for the last record of its buffer the copy read
    /// past the end of the heap block (AddressSanitizer's heap-buffer-overflow under
    /// `make sanitize`, through a file watch's rescan). `d_name` is a homogeneous tuple of `CChar`,
    /// so its memory is bound to `CChar`; `strlen` stops at the NUL inside the record.
    public static func name(_ entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
        withUnsafeMutablePointer(to: &entry.pointee.d_name) { field in
            let start = UnsafeRawPointer(field).assumingMemoryBound(to: CChar.self)
            return Array(UnsafeRawBufferPointer(start: start, count: strlen(start)))
        }
    }
}
