import Model

/// Turns declared types into LuaCATS types (`---@param location crescent.location`).
///
/// Argument types are structured (``ArgumentType``) and map exactly; records become classes
/// (``records``). Property, result and payload types are written in words in the declarations
/// (`location or nil`, `placemarks`), so they map by their words: the Lua types, records and
/// data models known by name, `X or nil`, `{X}`; anything else is `any`, and the words stay in
/// the doc comment beside it.
struct StubTypes {
    /// Record classes met so far, by name, with their fields.
    private(set) var records: [String: [ArgumentType.Field]] = [:]
    /// Data models scripts receive, by name (a `location`, a `placemark`…).
    static let models = ["location", "placemark", "response", "feed", "item", "user", "fileStat", "processResult", "record", "error",
                         "change"]
    /// Data models whose fields are the script's own (a store's record): their class also takes
    /// any other name. The others list every field they have, so an editor flags a misspelled
    /// one (`p.contry`) as the host does at run time.
    static let openModels: Set<String> = ["record"]
    /// Fields of data models that no declared argument type describes (a store's record, the
    /// geocoder's placemark, a response, a feed and its items, a user, a file's stat, a process's
    /// result, the change set a collection's `didChange` carries), and the fields of a location
    /// besides the `lat` and `lon` scripts pass (optional there, so `{ lat =, lon = }` is one).
    /// Methods of data models (models.lua's), as LuaCATS fields: with the models closed, an
    /// editor would flag the README's own `r:json()` as undefined without them.
    static let modelMethods: [String: [String]] = [
        "response": ["json fun(self: crescent.response, opts?: table): any The body decoded as json.decode decodes it (raises when it is not JSON)."],
    ]

    static let modelFields: [String: [String]] = [
        "location": ["lat number Latitude, degrees (WGS 84).",
                     "lon number Longitude, degrees (WGS 84).",
                     "time number? When the fix was taken, seconds since the epoch (UTC).",
                     "provider string? The provider that made it: gpsd, nmea, gpx or fixed.",
                     "altitude number? Metres above mean sea level.",
                     "speed number? Metres per second over the ground.",
                     "course number? Degrees clockwise from true north, [0, 360).",
                     "accuracy number? Estimated horizontal error, metres."],
        "response": ["status integer The HTTP status (200).",
                     "headers table<string, string> The headers, names in lower case.",
                     "body string The body's bytes, exactly as received.",
                     "url string The URL answered (after redirects)."],
        "feed": ["url string The feed's URL as added.",
                 "title string The feed's title (empty when it has none).",
                 "interval number Seconds between polls.",
                 "lastChecked number? When it was last fetched, seconds since the epoch.",
                 "lastError crescent.Error? Why the last fetch failed, or nil.",
                 "itemCount integer How many of its items are kept."],
        "item": ["id string The entry's own id (or its link).",
                 "title string Plain text, on one line.",
                 "link string? Absolute, or nil when there is none.",
                 "published number? Seconds since the epoch, or nil when the feed gives no date.",
                 "summary string Plain text, at most 1000 characters.",
                 "feed string The URL of the feed it came from.",
                 "feedTitle string That feed's title."],
        "user": ["name string The user's name.", "since integer When they logged in, Unix seconds."],
        "fileStat": ["path string The path described.",
                     "kind string file, folder, link or other.",
                     "size integer Bytes.",
                     "modified number Seconds since 1970.",
                     "mode integer The permission bits (0o644)."],
        "processResult": ["status integer? The exit status, nil when a signal ended it.",
                          "signal string? The signal that ended it (\"SIGTERM\"), or nil.",
                          "stdout string What it wrote to its standard output.",
                          "stderr string What it wrote to its standard error.",
                          "truncated boolean True when an output passed maxBytes and was cut.",
                          "timedOut boolean True when its timeout passed."],
        "record": ["id integer The record's id in its collection."],
        "placemark": ["name string What to call the place: its locality (Paris for a point in one of Paris' arrondissements).",
                      "locality string The town or city (Paris, Tokyo).",
                      "subLocality string? The section of the city when the place is one (Paris 04 Hôtel-de-Ville, Eifuku).",
                      "admin1 string? The first-level division (Île-de-France).",
                      "admin2 string? The second-level division (Hauts-de-Seine).",
                      "countryCode string The ISO 3166-1 alpha-2 code (FR).",
                      "country string The country's name (France).",
                      "timeZone string? The IANA time zone (Europe/Paris).",
                      "lat number Latitude of the place, degrees.",
                      "lon number Longitude of the place, degrees.",
                      "population integer? Inhabitants of the place (of the section, for a section).",
                      "distance number? Metres from the point asked about (reverse only)."],
        "change": ["inserted integer[] Positions in items of the inserted records (after the change).",
                   "deleted integer[] Positions of the deleted records (before the change).",
                   "updated integer[] Positions in items of the updated records.",
                   "reload boolean? True when the change is too big to list: read items again.",
                   "insertedItems crescent.record[] The records at inserted.",
                   "updatedItems crescent.record[] The records at updated.",
                   "items crescent.record[]? The whole list after the change, when a reload carries it."],
    ]
    /// The types of the fields of event payloads written as their fields (`didExit`'s `{ status,
    /// signal, timedOut, error }`, `didOutput`'s), by name: their words give no type.
    static let payloadFields: [String: String] = [
        "status": "integer", "signal": "string?", "timedOut": "boolean", "line": "string", "truncated": "boolean",
        "overflow": "boolean?", "newItems": "crescent.item[]",
    ]
    /// Model objects services hand out (a store's `collection`), which get a class of their own.
    let objects: Set<String>

    init(objects: Set<String> = []) {
        self.objects = objects
    }

    /// The LuaCATS form of a declared argument type.
    mutating func type(of argument: ArgumentType) -> String {
        switch argument {
        case .any: return "any"
        case .string: return "string"
        case .integer: return "integer"
        case .number: return "number"
        case .boolean: return "boolean"
        case .table: return "table"
        case .array(let element):
            let inner = type(of: element)
            return inner.contains("|") ? "(\(inner))[]" : inner + "[]"
        case .record(let name, let fields):
            let known = records[name] ?? []
            var merged = known
            for field in fields where !merged.contains(where: { $0.name == field.name }) { merged.append(field) }
            records[name] = merged
            return Self.className(name)
        case .oneOf(let types):
            return types.map { type(of: $0) }.joined(separator: "|")
        }
    }

    /// The LuaCATS form of a type written in words; `any` when the words name no type.
    func type(words: String) -> String {
        var text = words.trimmingCharacters(in: " .")
        var optional = false
        for suffix in [" or nil", "?"] where text.hasSuffix(suffix) {
            text.removeLast(suffix.count)
            optional = true
        }
        let base: String
        if text.hasPrefix("{") && text.hasSuffix("}"), let fields = recordLiteral(text.dropFirst().dropLast()) {
            base = fields
        } else if text.hasPrefix("{") && text.hasSuffix("}") {
            let inner = type(words: String(text.dropFirst().dropLast()))
            base = inner == "any" ? "any[]" : inner + "[]"
        } else if let single = singular(text) {
            base = single + "[]"
        } else {
            base = simple(text) ?? phrase(text) ?? "any"
        }
        return optional && base != "any" ? base + "?" : base
    }

    /// A payload written as its fields, `{ feed, newItems }` or `{ stream = "stdout" or "stderr",
    /// line }` (a space inside the braces or a comma, as the docs write payloads; `{place}` is an
    /// array), as a LuaCATS table `{ feed: crescent.feed, newItems: any }`: a field named after a
    /// model is that model, one given a quoted value a string, one given a table a table, any
    /// other `any`. Nil for an array.
    private func recordLiteral(_ inner: Substring) -> String? {
        guard inner.contains(",") || inner.first == " " || inner.contains("=") else { return nil }
        var parts: [Substring] = []
        var depth = 0, start = inner.startIndex
        for index in inner.indices {
            switch inner[index] {
            case "{", "(": depth += 1
            case "}", ")": depth -= 1
            case "," where depth == 0:
                parts.append(inner[start..<index])
                start = inner.index(after: index)
            default: break
            }
        }
        parts.append(inner[start...])
        var fields: [String] = []
        for part in parts {
            let field = part.drop { $0 == " " }
            let name = field.prefix { $0 == "_" || $0.isLetter || $0.isNumber }
            guard !name.isEmpty else { continue }
            var type = simple(String(name)) ?? Self.payloadFields[String(name)] ?? "any"
            if let equals = field.firstIndex(of: "=") {
                let value = field[field.index(after: equals)...].drop { $0 == " " }
                type = value.hasPrefix("\"") ? "string" : value.hasPrefix("{") ? "table" : type
            }
            // `error (when it could not start)`, `status (nil when a signal ended it)`: a field
            // the payload has only sometimes.
            if let open = field.firstIndex(of: "("), field[open...].contains("when"), type != "any", !type.hasSuffix("?") {
                type += "?"
            }
            fields.append("\(name): \(type)")
        }
        return fields.isEmpty ? nil : "{ " + fields.joined(separator: ", ") + " }"
    }

    /// The type a result described in a phrase names: its first word that is a type, after
    /// `array of` when that comes first (`the stored record with its id`, `an array of records`,
    /// `the new items, newest first`, `change set {inserted, …}`); counts (`how many …`) are
    /// integers. What follows a `,`, `(`, `{` or `:` is detail, not type.
    private func phrase(_ text: String) -> String? {
        // The case of a word is kept: models and objects are named in camel case (`fileStat`).
        let head = String(text.prefix { !",({:".contains($0) })
        if head.lowercased().hasPrefix("how many") { return "integer" }
        let words = head.split(separator: " ").map(String.init)
        let lowered = words.map { $0.lowercased() }
        let isArray = lowered.starts(with: ["array", "of"]) || lowered.dropFirst().starts(with: ["array", "of"])
        for word in words where !["a", "an", "the", "array", "of"].contains(word.lowercased()) {
            if let single = singular(word) { return single + "[]" }
            if let type = simple(word) { return isArray ? type + "[]" : type }
        }
        return nil
    }

    /// A plural of a known type (`placemarks`, `strings`) as that type.
    private func singular(_ words: String) -> String? {
        guard words.hasSuffix("s"), words.count > 1 else { return nil }
        return simple(String(words.dropLast()))
    }

    private func simple(_ word: String) -> String? {
        switch word {
        case "string", "number", "integer", "boolean", "table", "nil": return word
        case "value": return "any"
        case "true", "false": return "boolean"
        // The error class is capitalized (globals.lua's `crescent.Error`), unlike the data models.
        case "error": return "crescent.Error"
        default: return Self.models.contains(word) || objects.contains(word) ? Self.className(word) : nil
        }
    }

    /// `crescent.location`.
    static func className(_ name: String) -> String { "crescent." + name }

    /// The class of a service (`crescent.service.geocoder`).
    static func serviceClass(_ name: String) -> String { "crescent.service." + name }
}

extension String {
    /// The string without `characters` at either end.
    func trimmingCharacters(in characters: String) -> String {
        var text = Substring(self)
        while let first = text.first, characters.contains(first) { text.removeFirst() }
        while let last = text.last, characters.contains(last) { text.removeLast() }
        return String(text)
    }
}
