public import Model

/// The standard services, made from their config sections: the plugin set behind `crescent`.
///
/// Each service folder provides a `make(_:)` that reads its own section of the context; they are
/// listed here in the order `crescent services` shows them.
public enum StandardServices {
    /// Makes every standard service.
    public static func make(_ context: PluginContext) throws(ServiceError) -> [any Service] {
        var services: [any Service] = []
        for make in makers { services += try make(context) }
        return services
    }

    /// One entry per service folder.
    static let makers: [@Sendable (PluginContext) throws(ServiceError) -> [any Service]] = [
        LocationService.maker,
        GeocoderService.maker,
        Store.maker,            // store, session and feeds: one database
        HTTPService.maker,
    ]
}
