import Model
import NIOCore

/// The hold an owner has on an object a method handed it that keeps working (a spawned
/// process): the run stays alive while the object works, and ending the owner ends the object.
final class OwnedObjectShare: Cancellable {
    let object: any OwnedModelObject
    var ownerSlot: Int32 = -1
    private let ownerLink: WeakLink<Scope>
    private let bindingLink: WeakLink<ModelBinding>

    init(object: any OwnedModelObject, owner: Scope, binding: ModelBinding) {
        self.object = object
        ownerLink = owner.weakLink
        bindingLink = binding.weakLink
    }

    /// The owner ended first: the object stops.
    func cancel() {
        bindingLink.object?.ownedObjects[ObjectIdentifier(object)] = nil
        object.ownerEnded()
    }

    /// The task that made it ended (``LuaTask/ownsSpawns``): the object stops gently, unless it
    /// finished already; its owner keeps it until it has.
    func taskEnded() {
        guard ownerSlot >= 0 else { return }
        object.taskEnded()
    }

    /// The object finished on its own: the owner lets go of it.
    func finish() {
        bindingLink.object?.ownedObjects[ObjectIdentifier(object)] = nil
        ownerLink.object?.forget(self)
    }
}

extension ModelBinding {
    /// Makes `object`, just handed to a script, part of the current owner, and lets it start.
    func adopt(_ object: any OwnedModelObject) {
        let id = ObjectIdentifier(object)
        guard ownedObjects[id] == nil else { return }
        let share = OwnedObjectShare(object: object, owner: running.currentScope, binding: self)
        ownedObjects[id] = share
        running.currentScope.adopt(share)
        if object.endsWithTask, let task = running.currentTask, task.ownsSpawns, !task.isDone {
            // A long task that spawns many programs keeps only those still running.
            if task.spawned.count >= 64, task.spawned.count.isMultiple(of: 64) { task.spawned.removeAll { $0.ownerSlot < 0 } }
            task.spawned.append(share)
        }
        let link = self.link
        let bound = NIOLoopBound(share, eventLoop: link.eventLoop)
        // After the object's last report: those went to the loop first, through the same queue.
        object.adopt { _ = link.later { _ in bound.value.finish() } }
    }
}
