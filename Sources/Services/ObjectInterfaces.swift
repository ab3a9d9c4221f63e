public import Model

/// The declarations of the model objects standard services hand out that are not services
/// themselves (a store's `collection`), so that the stubs can give each its own class and an
/// editor completes `todo:add(…)` after `local todo = services.store:collection("todo")`.
public enum ObjectInterfaces {
    /// Every such object's interface, by the name results call it (`the collection`).
    public static var standard: [AnyInterface] { [StoreCollection.declaration, SpawnedProcess.declaration, FileWatcher.declaration] }
}
