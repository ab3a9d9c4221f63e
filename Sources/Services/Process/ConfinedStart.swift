/// What a confined start of a program is given (``ProcessSpec/confinedStart``): a plugin's
/// program, which the kernel confines to the plugin's grants between fork and exec.
public struct ConfinedStart: Sendable {
    /// The file to run, absolute.
    public let program: String
    /// Its arguments after argv[0] (the confinement names argv[0]: the program, or what runs a
    /// `#!` script).
    public let arguments: [String]
    /// `NAME=value` for each variable it gets, and no other.
    public let environment: [String]
    /// The folder it runs in.
    public let directory: String?
    /// Its standard streams, dup'ed onto 0, 1 and 2 in the child.
    public let stdin: Int32
    public let stdout: Int32
    public let stderr: Int32
}
