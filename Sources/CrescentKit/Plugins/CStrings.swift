#if canImport(Glibc)
import Glibc
#endif

/// C strings and arrays made for one spawn and freed after it (the child has its copies by then),
/// and the descriptors opened for it, closed then too.
final class CStrings {
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var lists: [UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>] = []
    private var portArrays: [UnsafeMutablePointer<UInt16>] = []
    private var descriptorArrays: [UnsafeMutablePointer<Int32>] = []
    private var opened: [Int32] = []

    func constant(_ text: String) -> UnsafePointer<CChar>? {
        guard let copy = strdup(text) else { return nil }
        strings.append(copy)
        return UnsafePointer(copy)
    }

    /// A NULL-terminated array of copies of `items`.
    func list(_ items: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
        let array = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: items.count + 1)
        lists.append(array)
        for (index, item) in items.enumerated() {
            let copy = strdup(item)
            if let copy { strings.append(copy) }
            array[index] = copy
        }
        array[items.count] = nil
        return array
    }

    func constants(_ items: [String]) -> UnsafePointer<UnsafePointer<CChar>?> {
        UnsafeRawPointer(list(items)).assumingMemoryBound(to: UnsafePointer<CChar>?.self)
    }

    func ports(_ items: [UInt16]) -> UnsafePointer<UInt16> {
        let array = UnsafeMutablePointer<UInt16>.allocate(capacity: max(items.count, 1))
        portArrays.append(array)
        for (index, item) in items.enumerated() { array[index] = item }
        return UnsafePointer(array)
    }

    func descriptors(_ items: [Int32]) -> UnsafePointer<Int32> {
        let array = UnsafeMutablePointer<Int32>.allocate(capacity: max(items.count, 1))
        descriptorArrays.append(array)
        for (index, item) in items.enumerated() { array[index] = item }
        return UnsafePointer(array)
    }

    /// Closes `descriptors` in ``free()``.
    func closeAfterSpawn(_ descriptors: [Int32]) {
        opened += descriptors
    }

    func free() {
        for string in strings { Glibc.free(string) }
        for list in lists { list.deallocate() }
        for array in portArrays { array.deallocate() }
        for array in descriptorArrays { array.deallocate() }
        for descriptor in opened { close(descriptor) }
        strings = []
        lists = []
        portArrays = []
        descriptorArrays = []
        opened = []
    }
}
