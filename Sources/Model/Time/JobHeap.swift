/// What a ``JobHeap`` orders: a scheduled job that runs before another (by due time, then by
/// the order it was scheduled in).
package protocol HeapOrdered {
    func runsBefore(_ other: Self) -> Bool
}

/// A binary min-heap of scheduled jobs: push and pop in O(log n), the first in O(1). The one
/// queue of the host's loop timers and of the virtual clock of `crescent test` (a sorted array
/// there made creating n timers cost O(n²)).
package struct JobHeap<Job: HeapOrdered> {
    private var jobs: [Job] = []

    package init() {}

    package var count: Int { jobs.count }
    package var first: Job? { jobs.first }

    package mutating func push(_ job: Job) {
        jobs.append(job)
        siftUp(jobs.count - 1)
    }

    package mutating func pop() -> Job? {
        guard !jobs.isEmpty else { return nil }
        jobs.swapAt(0, jobs.count - 1)
        let job = jobs.removeLast()
        if !jobs.isEmpty { siftDown(0) }
        return job
    }

    /// Drops the jobs `shouldGo` names and rebuilds the heap, in O(n).
    package mutating func removeAll(where shouldGo: (Job) -> Bool) {
        jobs.removeAll(where: shouldGo)
        for index in stride(from: jobs.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard jobs[child].runsBefore(jobs[parent]) else { return }
            jobs.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < jobs.count else { return }
            var first = left
            if left + 1 < jobs.count, jobs[left + 1].runsBefore(jobs[left]) { first = left + 1 }
            guard jobs[first].runsBefore(jobs[parent]) else { return }
            jobs.swapAt(first, parent)
            parent = first
        }
    }
}

extension JobHeap: Sendable where Job: Sendable {}
