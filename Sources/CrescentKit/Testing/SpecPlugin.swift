import Model
import Services

/// The services of a spec file's host: the standard ones (the store in memory), with the network and
/// the location device and programs replaced: `http` answers from the spec's `fake.http` routes,
/// `process` from its `fake.process` answers, and
/// `location` stands for a device that is not there until the spec calls `fake.location`.
/// Reaching either without a fake fails the test, naming the fake to use.
struct SpecPlugin: Plugin {
    let name = "standard"
    let link: SpecLink

    func serviceEntries(_ context: PluginContext) throws(ServiceError) -> [ServiceEntry] {
        let link = self.link
        let exchange: HTTPService.Exchange = { request, completion in
            // Taken while the script's call is on the stack: a route that does not match names it.
            let place = link.callingPlace()
            link.withSpec { spec in
                completion(spec?.answer(request, at: place) ?? .failure(ServiceError(.cancelled, "the test has ended")))
            }
        }
        let http: ServiceEntry
        do throws(ServiceError) {
            http = ServiceEntry(made: try HTTPService(config: context.section("http"), clock: context.clock, exchange: exchange))
        } catch {
            http = ServiceEntry(made: try HTTPService(clock: context.clock, exchange: exchange))
        }
        let absent = LocationScript(unavailable: ServiceError(
            .unavailable, "no location device in a test: use fake.location { fixes = { { lat = 48.85, lon = 2.35 } } }",
            service: "location")) {
            link.notice((link.callingPlace() ?? "") + "the code under test started services.location without a fake; use fake.location { fixes = { { lat = 48.85, lon = 2.35 } } } before it starts")
        }
        let location = ServiceEntry(made: LocationService(script: absent, clock: context.clock))
        let clock = context.clock
        let process = ServiceEntry(made: ProcessService(clock: clock) { spec, completion in
            let place = link.callingPlace()
            let run = FakedProgramRun(completion: completion)
            link.withSpecLater { spec_ in
                guard let (result, duration) = spec_?.answer(spec, at: place) else {
                    return run.answer(.failure(ServiceError(.cancelled, "the test has ended")), after: 0, timeout: nil, clock: clock)
                }
                run.answer(result, after: duration, timeout: spec.timeout, clock: clock)
            }
            return { run.kill() }
        })
        return StandardServices.entries(context, location: location, http: http, process: process)
    }

    var settingKeys: [String: [String]] { StandardServices.settingKeys }
}
