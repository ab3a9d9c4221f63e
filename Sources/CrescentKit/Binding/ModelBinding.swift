import CLua
import LuaBridge
import Model
import NIOCore

/// Binds the model to Lua: service objects, their properties, methods and events, the observer
/// registry, and the globals `services`, `observe`, `on`, `post`, `subscriptions` and `help`.
///
/// Everything here runs on the host's loop. Each model object gets one userdata per VM (so the same
/// object is always the same Lua value); the metatable of its interface is built once, and each
/// object's userdata gets a copy whose `__index` is the object's cache table of property values:
/// reading an unchanged property is the VM's own table lookup, with no C or Swift call. A miss
/// enters C (cached data models, then the methods, which it copies into the cache) and only then
/// the Swift getter; a change reported by the object clears that entry before observers hear of it.
final class ModelBinding {
    /// The host that made this binding in its init and holds it until it tears down, as the
    /// binding sees it (``BindingEnvironment``). Not retained: every way in (the host's loop
    /// jobs, the Lua functions of the host's VM, the registry it dispatches for) ends before the
    /// host does: the VM closes and `teardown` detaches the registry and every model object while
    /// the host is still alive. What a call or a delivery reads is in ``running``.
    unowned let host: any BindingEnvironment
    /// Who the Lua code running now works for: the host's, shared.
    let running: RunningCode
    let registry: ObserverRegistry
    /// The services, in registration order: each made when a script first touches it.
    private(set) var services: [ServiceEntry] = []
    /// The `services` table, for the REPL's completion.
    private var servicesTable: LuaRef?
    /// `on("didFail", f)` warnings waiting for the end of the turn: a script that posts the name
    /// itself (in the same turn or before) listens for its own event rightly and is not warned.
    var pendingOwnEventWarnings: [(name: String, line: String)] = []
    /// The names such a warning was for, and those of them the script posted (kept small: only
    /// names of services' events that `on` was given without a prefix).
    var ownEventCandidates: Set<String> = []
    var postedOwnEvents: Set<String> = []
    /// Makes `{ latest = true }` handlers (loaded on first use).
    var latestWrapper: LuaRef?
    var objects: [ObjectIdentifier: (box: ObjectBox, userdata: LuaRef)] = [:]
    var interfaceTypes: [String: LuaObjectType<ObjectBox>] = [:]
    /// Every method a model object's userdata answers to, by interface name (REPL completion).
    var methodNames: [String: [String]] = [:]
    /// Converting values that cross to another VM (a plugin's): a table with a metatable has no
    /// model form there, so it is refused like a function.
    var refusesMetatables = false
    /// Converting a service call's arguments: a table with no fields of its own whose metatable
    /// has `__index` (a proxy) is refused, not read as the empty table it is raw: a location
    /// given that way was silently an empty batch.
    var refusesProxies = false
    /// While a value of an object that hands out JSON data is pushed: null fields are pushed
    /// as `json.null` (see ``ModelObject/handsOutJSONData``).
    var pushesNullFields = false
    /// The stack of the Lua call whose service work is starting, while its synchronous part runs
    /// (``callingPlace()``); nil otherwise.
    var callingStack: LuaStack?
    /// In-flight requests: they keep the run alive. Used on the loop only; inserting and
    /// removing call nothing but the request's identity hash.
    var requests: Set<ServiceRequest> = []
    /// A delivery round is queued on the loop.
    var deliveryScheduled = false
    /// The services `start()` was called on in this run (``unstartedServiceNotes()``).
    var startedServices: Set<String> = []
    /// The started services whose unheard `didFail` was warned about (once each).
    var unheardFailureWarned: Set<String> = []
    /// Start shares per service.
    var shares: [ObjectIdentifier: [StartShare]] = [:]
    /// Objects handed to callers that still work for their owners (spawned processes).
    var ownedObjects: [ObjectIdentifier: OwnedObjectShare] = [:]
    /// Delegate registrations by subscription id.
    var delegates: [Int: Delegate] = [:]
    /// Per data model type with methods (`response`), the metatable of its fields table.
    var modelMethodTables: [String: LuaRef] = [:]
    /// The slot in `tables.modelTemplates` of each data model type name.
    var modelTemplateSlots: [String: Int32] = [:]
    /// Per shared data model schema, what pushing its models needs (see `slots(of:)`).
    var sharedSchemaSlots: [ObjectIdentifier: SchemaSlots] = [:]
    /// Per data model type name, the shared schema its models were pushed with: a model read back
    /// from Lua takes it again, so its type's declared fields stay known (a template or a check
    /// tells an optional field this model lacks from a name the type does not have).
    var declaredSchemas: [String: ModelSchema] = [:]
    var lastSchemaSlots: SchemaSlots?
    /// The buffers a conversion from Lua reuses (see `convertedValue(at:in:)`).
    var spareConversionState = ConversionState()
    /// Field names made in either direction, found again.
    let fieldNames: FieldNameCache
    /// What every model value and handle shares, made with the VM.
    let tables: BindingTables
    /// The host's VM, held directly: the delivery path reads it often, and an `unowned` load
    /// each time shows up in profiles.
    let vm: LuaVM
    /// The prototypes of change tables, one per observed property.
    var changePrototypes: [ChangePrototypeKey: LuaRef] = [:]
    /// True once ``teardown()`` ran: the VM is closing, and Lua that still runs (a `__gc`
    /// finalizer) can no longer start anything.
    private(set) var isTornDown = false
    /// Which model this is: a spec file's host restarts the model for each test, and what an
    /// earlier one handed out (its object boxes) is refused (``checkCurrent(_:_:)``).
    private(set) var generation = 0
    /// What requests and start shares refer to the binding by (``Model/WeakLink``).
    let weakLink = WeakLink<ModelBinding>()

    /// A binding for `host`'s `vm`; `onRegistryReport` hears what the observer registry
    /// reports (failed handlers, cancelled subscriptions, cycles).
    init(host: any BindingEnvironment, running: RunningCode, vm: LuaVM, tables: BindingTables,
         onRegistryReport: @escaping (ObserverRegistry.Report) -> Void) {
        self.host = host
        self.running = running
        self.tables = tables
        fieldNames = FieldNameCache(anchors: tables.fieldNameAnchors)
        self.vm = vm
        registry = ObserverRegistry(report: onRegistryReport)
        weakLink.attach(self)
    }

    deinit { weakLink.clear() }

    // MARK: Installation

    /// Loads the prelude's model tables and installs the globals and the services.
    func install(services entries: [ServiceEntry]) throws(LuaError) {
        registry.dispatcher = self
        try installModelMethods()
        installObservationGlobals()
        installHelp()
        services = entries
        try installServicesTable()
    }

    /// `services`: a read-only proxy whose `__index` is the table of the services made so far,
    /// so reading one that exists is a raw lookup in C; the first read of a service that is not
    /// made yet enters ``startService(_:)``, and an unknown name is an error listing the
    /// services. The proxy is an empty userdata rather than a table: `rawset` cannot put a
    /// service of its own in it.
    private func installServicesTable() throws(LuaError) {
        let stack = vm.stack
        _ = lua_newuserdatauv(stack.state, 0, 0)                     // proxy
        stack.newTable(fieldCount: 4)                                // proxy mt
        stack.newTable(fieldCount: Int32(services.count))            // proxy mt byName
        stack.newTable(fieldCount: 1)                                // proxy mt byName byNameMt
        try Prelude.services.load(into: vm)
        vm.pushFunction { [unowned self] stack in try self.startService(stack) }
        _ = lua_getglobal(stack.state, "error")
        try vm.call(arguments: 2, results: 1)                        // ... byNameMt index
        stack.rawSet(-2, "__index")
        lua_setmetatable(stack.state, -2)                            // proxy mt byName
        stack.rawSet(-2, "__index")                                  // proxy mt
        vm.register(field: "__newindex") { stack in
            throw LuaRaise("cannot set 'services.\(stack.describe(at: 2))': the services table is read-only")
        }
        stack.push("services")
        stack.rawSet(-2, "__metatable")
        // The proxy itself is empty: say what it holds (print, inspect, the REPL), written when
        // asked (joining names at start-up costs a first use of generic code that a run
        // without `tostring(services)` never needs).
        vm.register(field: "__tostring") { [unowned self] stack in
            var summary = "<services: "
            for (index, entry) in self.services.enumerated() {
                if index > 0 { summary += ", " }
                summary += entry.name
            }
            stack.push(summary + ">")
            return .one
        }
        vm.register(field: "__pairs") { [unowned self] stack in try self.servicesPairs(stack) }
        lua_setmetatable(stack.state, -2)
        stack.pushValue(at: -1)
        servicesTable = vm.ref(from: stack)
        vm.setGlobal("services")
    }

    /// Puts `service` in the place of the service of its name, or adds it (`crescent test`'s
    /// fakes): `services.<name>` answers it from now on; a value read before keeps the old one.
    func substitute(_ service: any Service) {
        let entry = ServiceEntry(made: service)
        if let index = services.firstIndex(where: { $0.name == entry.name }) {
            services[index] = entry
        } else {
            services.append(entry)
        }
        guard let servicesTable else { return }
        let stack = vm.stack
        servicesTable.push(onto: stack)                              // proxy
        lua_getmetatable(stack.state, -1)                            // proxy mt
        _ = stack.rawGet(-1, "__index")                              // proxy mt byName
        stack.push(entry.name)
        stack.pushNil()
        lua_rawset(stack.state, -3)                                  // proxy mt byName
        stack.pop(3)
    }

    /// True when the value at `index` is the `services` table.
    func isServicesTable(at index: Int32, in stack: LuaStack) -> Bool {
        guard let servicesTable, stack.type(at: index) == .userdata else { return false }
        let value = stack.absolute(index)
        servicesTable.push(onto: stack)
        defer { stack.pop() }
        return lua_rawequal(stack.state, value, -1) != 0
    }

    /// Pushes the userdata of service `name`, making the service if need be (the host's own
    /// code: nothing of the script runs); false, with nothing pushed, when it cannot be had.
    func pushService(named name: String, onto stack: LuaStack) -> Bool {
        // Completion and `observe` cannot wait for a plugin never seen before: it holds the loop
        // a moment at most, then starts on in the background.
        if let start = host.pendingStart(of: name), !start.startForTouch() {
            return false
        }
        guard let service = try? madeService(named: name) else { return false }
        pushObject(service, onto: stack)
        return true
    }

    /// `byName[name]` for a service not made yet (`byName name`): makes it, keeps its userdata in
    /// `byName` and answers it; a service that cannot start raises why, and only here. A plugin
    /// that must start in the background before its services exist suspends a task that touches
    /// it until then (answering nothing), so the loop runs on meanwhile.
    private func startService(_ stack: LuaStack) throws -> LuaReturn {
        let name = stack.text(at: 2) ?? stack.describe(at: 2)
        if let start = host.pendingStart(of: name) {
            if let task = running.currentTask, task.coroutine.thread == stack.state, stack.isYieldable {
                let hostOnLoop = NIOLoopBound(host, eventLoop: host.loop)
                let boundTask = NIOLoopBound(task, eventLoop: host.loop)
                task.arrangedResume()
                start.startInBackground {
                    hostOnLoop.value.enqueue { hostOnLoop.value.resume(boundTask.value, arguments: 0) }
                }
                return .yield(0)
            }
            // Outside a task the touch cannot wait: a program that does not answer soon starts
            // on in the background, and the touch says so (nothing is kept: a later touch finds
            // the services once the start is done).
            if !start.startForTouch() {
                stack.pushNil()
                stack.push(start.stillStartingNote(touching: name))
                return .values(2)
            }
        }
        let service: any Service
        do {
            service = try madeService(named: name)
        } catch {
            // Raised by the Lua side, so the message names the script's line.
            stack.pushNil()
            stack.push("\(error)")
            return .values(2)
        }
        pushObject(service, onto: stack)                             // byName name ud
        stack.pushValue(at: 2)                                       // byName name ud name
        stack.pushValue(at: -2)                                      // byName name ud name ud
        lua_rawset(stack.state, 1)                                   // byName name ud
        return .one
    }

    /// The service `name`, made now if need be; an unknown name or a service that cannot start
    /// is an error for the script.
    private func madeService(named name: String) throws -> any Service {
        guard let entry = services.first(where: { $0.name == name }) else {
            let names = services.map(\.name)
            let closest = NameSuggestion.closest(to: name, among: names)
            let listing = NameSuggestion.listing("services", names, suggesting: closest)
            if let note = host.missingServiceNote(for: name) {
                throw LuaRaise("no service '\(name)' (\(listing)): \(note)")
            }
            throw LuaRaise("no service '\(name)' (\(listing))")
        }
        do throws(ServiceError) {
            return try entry.service()
        } catch {
            throw LuaRaise("services.\(name) cannot start: \(error.code.name): \(error.message)")
        }
    }

    /// `pairs(services)` (`proxy`): every service by name, each made as the loop starts.
    private func servicesPairs(_ stack: LuaStack) throws -> LuaReturn {
        guard isServicesTable(at: 1, in: stack) else { throw stack.argumentError(1, function: "__pairs", expected: "services") }
        lua_getmetatable(stack.state, 1)                             // proxy mt
        _ = lua_getfield(stack.state, -1, "__index")                 // proxy mt byName
        for entry in services where !byNameHolds(entry.name, stack) {
            let service = try madeService(named: entry.name)
            stack.push(entry.name)                                   // ... byName name
            pushObject(service, onto: stack)                         // ... byName name ud
            lua_rawset(stack.state, -3)                              // ... byName
        }
        stack.setTop(1)
        return Self.pairsOverIndexTable(stack)
    }

    /// True when the table on top of the stack holds `name` (raw).
    private func byNameHolds(_ name: String, _ stack: LuaStack) -> Bool {
        stack.push(name)
        let held = lua_rawget(stack.state, -2) != LUA_TNIL
        stack.pop()
        return held
    }

    // MARK: Teardown

    /// Detaches from every object and forgets all subscriptions. Runs before the VM closes; the
    /// shared ``tables`` stay until then, for the finalizers that run as it closes. `keepsVM`:
    /// the VM lives on for a new model (``restart(services:)``, a spec file's next test).
    func teardown(keepingVM keepsVM: Bool = false) {
        isTornDown = true
        for (box, userdata) in objects.values {
            if let id = box.sinkID { box.object.changes.detach(id) }
            // The VM lives on with the next test's model: the property values cached on the
            // object's userdata go, so a read enters the getter, which refuses the old object.
            if keepsVM { clearCaches(of: userdata) }
        }
        for request in requests { request.cancel() }
        requests.removeAll()
        for (_, list) in shares {
            for share in list { share.cancel() }
        }
        shares.removeAll()
        for share in Array(ownedObjects.values) { share.cancel() }
        ownedObjects.removeAll()
        registry.removeAll()
        registry.dispatcher = nil
        changePrototypes.removeAll()
        objects.removeAll()
        modelMethodTables.removeAll()
        sharedSchemaSlots.removeAll()
        declaredSchemas.removeAll()
        lastSchemaSlots = nil
        if keepsVM { clearMadeServices() } else { servicesTable = nil }
        services.removeAll()        // the services go with the run (their pollers and clients too)
        latestWrapper = nil
    }

    /// A new model after ``teardown()`` in a VM that stays (a spec file's next test): `services`
    /// makes `entries` from now on; what the old model handed out is refused.
    func restart(services entries: [ServiceEntry]) throws(LuaError) {
        generation += 1
        isTornDown = false
        registry.dispatcher = self
        startedServices.removeAll()
        unheardFailureWarned.removeAll()
        delegates.removeAll()
        pendingOwnEventWarnings.removeAll()
        ownEventCandidates.removeAll()
        postedOwnEvents.removeAll()
        deliveryScheduled = false
        services = entries
    }

    /// Empties the table of made services behind the `services` proxy (the proxy itself stays:
    /// the spec's prelude wrapped its lookup, and a spec may hold it).
    private func clearMadeServices() {
        guard let servicesTable else { return }
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        servicesTable.push(onto: stack)                              // proxy
        guard lua_getmetatable(stack.state, -1) != 0 else { return } // proxy mt
        guard stack.rawGet(-1, "__index") == .table else { return }  // proxy mt byName
        Self.clearTable(at: -1, in: stack)
    }

    /// Empties the two user-value tables of an object's userdata (its cached values and models).
    private func clearCaches(of userdata: LuaRef) {
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        userdata.push(onto: stack)
        for slot: Int32 in 1...2 where lua_getiuservalue(stack.state, -1, slot) == LUA_TTABLE {
            Self.clearTable(at: -1, in: stack)
            stack.pop()
        }
    }

    /// Removes every key of the table at `index` (raw: no metamethod runs).
    private static func clearTable(at index: Int32, in stack: LuaStack) {
        let table = lua_absindex(stack.state, index)
        stack.pushNil()
        while lua_next(stack.state, table) != 0 {
            stack.pop()                                              // key
            stack.pushValue(at: -1)                                  // key key
            stack.pushNil()                                          // key key nil
            lua_rawset(stack.state, table)                           // key
        }
    }

    /// True while something the model does can still produce work.
    var hasPendingWork: Bool {
        !requests.isEmpty || !shares.isEmpty || !ownedObjects.isEmpty || registry.hasPending || deliveryScheduled
    }
}

/// A delegate registration (`obj:addObserver(observer)`): the observer's identity, the object it
/// observes and the subscription that delivers to it.
struct Delegate {
    let observer: UnsafeRawPointer
    let object: ObjectIdentifier
    let subscription: Subscription
}

/// One observed property, naming its change-table prototype.
struct ChangePrototypeKey: Hashable {
    let object: ObjectIdentifier
    let key: String
}

/// A unique address marking model object metatables (a light userdata key, never dereferenced).
/// Immutable after initialisation, so sharing it between threads is safe.
nonisolated(unsafe) let objectMarker = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
