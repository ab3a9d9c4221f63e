import CLua

/// Process-wide settings for an executable whose work is a host: made once, at its start, before
/// any thread allocates. A library embedding a host leaves the process as its owner set it.
public enum ProcessTuning {
    /// Lets malloc's heaps grow in large steps (see `crescent_tune_allocator`): a script that
    /// builds many tables otherwise spends a tenth of its time in mprotect.
    public static func apply() {
        crescent_tune_allocator()
    }
}
