/// The version `crescent --version` prints.
enum CrescentVersion {
    static let current = "0.1.0"
}
