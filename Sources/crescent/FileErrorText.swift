import Foundation

/// What went wrong with a file operation of Foundation's, in words: the system's reason
/// (`strerror`) of the error or of the POSIX error beneath it, never Foundation's
/// "The operation could not be completed. (NSCocoaErrorDomain error 512.)".
enum FileErrorText {
    static func reason(_ error: any Error) -> String {
        var current: NSError? = error as NSError
        // Bounded: an error chain is short; four levels is more than Foundation nests.
        for _ in 0..<4 {
            guard let found = current else { break }
            if found.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(found.code))) }
            current = found.userInfo[NSUnderlyingErrorKey] as? NSError
        }
        if let cocoa = error as? CocoaError {
            switch cocoa.code {
            case .fileNoSuchFile, .fileReadNoSuchFile: return String(cString: strerror(ENOENT))
            case .fileWriteFileExists: return String(cString: strerror(EEXIST))
            case .fileReadNoPermission, .fileWriteNoPermission: return String(cString: strerror(EACCES))
            case .fileWriteOutOfSpace: return String(cString: strerror(ENOSPC))
            case .fileWriteVolumeReadOnly: return String(cString: strerror(EROFS))
            default: break
            }
        }
        return "an error the system did not name (\((error as NSError).domain) \((error as NSError).code))"
    }
}
