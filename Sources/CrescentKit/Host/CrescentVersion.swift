/// The version of Crescent: what `crescent --version` prints, and what a plugin's
/// `crescent = ">=0.2.0, <1.0.0"` range is checked against.
public enum CrescentVersion {
    public static let current = "0.2.0"
}
