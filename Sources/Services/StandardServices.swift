public import Model

/// The standard services' composition root: the plugin set behind `crescent`.
///
/// Each service folder provides the entry of its services, reading its own section of the
/// context; this is where they are wired together (the store's database shared by `store`,
/// `session` and `feeds`; `feeds` fetching through the `http` service). Nothing is made or
/// opened here: each service is made when a script first touches it.
public enum StandardServices {
    /// Every standard service, in the order `crescent services` lists them.
    public static func entries(_ context: PluginContext) -> [ServiceEntry] {
        entries(context, location: LocationService.entry(context), http: HTTPService.entry(context))
    }

    /// Every standard service, with the `location`, `http` and (when given) `process` entries
    /// given (`crescent test` gives fakes): the feeds fetch through `http`'s service, which must
    /// be an ``HTTPService``.
    public static func entries(_ context: PluginContext, location: ServiceEntry, http: ServiceEntry,
                               process: ServiceEntry? = nil) -> [ServiceEntry] {
        [location, GeocoderService.entry(context)] + Store.entries(context, http: http)
            + [http, process ?? ProcessService.entry(context), FilesService.entry(context)]
    }

    /// The sections the standard services read and their keys (`crescent.toml`).
    public static let settingKeys: [String: [String]] = [
        "location": ["provider"],
        "geocoder": [],
        "store": ["path", "url", "synchronous", "poll_interval", "write_on_loop", "keep_changes"],
        "session": ["kdf_rounds", "failure_delay", "max_failure_delay", "min_password_length"],
        "feeds": ["interval", "min_interval", "max_backoff", "timeout", "max_bytes"],
        "http": ["timeout", "max_bytes", "connections_per_host"],
        "process": [],
        "files": [],
    ]

    /// Every standard service, made now (for Swift code and tests).
    public static func make(_ context: PluginContext) throws(ServiceError) -> [any Service] {
        var services: [any Service] = []
        for entry in entries(context) { services.append(try entry.service()) }
        return services
    }
}
