import Model

extension FeedsService: DeclaredService {
    static let serviceName = "feeds"

    /// What scripts see of the feeds service. `add` and `refresh` fetch over the network, so they
    /// run in Swift tasks; `remove` answers at once.
    static let declaration: AnyInterface = Interface<FeedsService>(
        name: serviceName, summary: "RSS, Atom and JSON Feed subscriptions, polled; new items are announced once."
    ) { d in
        d.property("feeds", type: "array of feed {url, title, interval, lastChecked, lastError, itemCount}",
                   "The subscriptions, in the order they were added (lastChecked: s since epoch; lastError: error {code, message} or nil).") { service in
            service.loadIfNeeded()
            return service.feedList.value
        }
        d.property("latest", type: "array of items", "The \(latestCount) newest items across the feeds, newest first: "
                   + "item {id, title, link, published (s since epoch or nil), summary, feed (its URL), feedTitle}.") { service in
            service.loadIfNeeded()
            return service.latest.value
        }
        d.method("add", [.init("url", .string, "An http or https URL of an RSS, Atom or JSON feed."),
                         .init("options", .table, "{ interval = seconds } between polls (default [feeds] interval, 900; at least [feeds] min_interval, 60).",
                               optional: true, options: addOptions)],
                 returns: "the feed {url, title, interval, lastChecked, lastError, itemCount}",
                 "Subscribes and fetches the feed (its items arrive in didUpdate); a failed first fetch is the error, and the feed stays subscribed.") { service, arguments async throws(ServiceError) in
            try await service.add(arguments[0].stringValue ?? "", interval: try interval(in: arguments[1]))
        }
        d.action("remove", [.init("url", .string, "The URL given to add.")],
                 "Unsubscribes and forgets the feed's items; not_found when it is not subscribed.") { service, arguments throws(ServiceError) in
            try service.remove(arguments[0].stringValue ?? "")
        }
        d.method("refresh", [.init("url", .string, "One feed's URL; every feed when left out.", optional: true)],
                 returns: "the new items, newest first",
                 "Fetches now; only the caller gets the items, while didUpdate goes to every observer as for a poll.") { service, arguments async throws(ServiceError) in
            .array(try await service.refresh(arguments[0].stringValue).map(\.value))
        }
        d.event("didUpdate", payload: "{ feed, newItems }", "A fetch found items never seen before (each is announced once, across restarts too).")
        d.event("didFail", payload: "{ feed, error }", "A fetch failed: network, timeout, an HTTP error status, or invalid_data for a document that is not a feed. Polling goes on, backing off.")
    }.erased

    /// The `interval` of `add`'s options, checked; nil when there are no options or no interval.
    /// Its range is checked against the settings by the service; here it must be a finite
    /// positive number (a huge one would overflow the poller's clock arithmetic).
    private static func interval(in options: Value) throws(ServiceError) -> Double? {
        try OptionTable.check(options, addOptions)["interval"]?.doubleValue
    }

    /// The options of `add`.
    private static let addOptions: [OptionTable.Option] = [.number("interval", in: 0...(100 * 365 * 86_400))]
}
