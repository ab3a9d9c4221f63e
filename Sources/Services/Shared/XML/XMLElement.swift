/// A start tag as ``XMLReader`` reads it: its names resolved against the namespaces in scope.
///
/// `<atom:link rel="self" href="/feed"/>` inside `xmlns:atom="http://www.w3.org/2005/Atom"` has
/// `name` `link`, `namespace` `http://www.w3.org/2005/Atom` and `qualifiedName` `atom:link`.
/// An element without a prefix is in the default namespace (`xmlns="…"`), or in none (`""`). A
/// prefix that was never declared keeps the name as written, in no namespace, as libxml2 does.
struct XMLElement {
    /// The local name: `link` for `atom:link`.
    let name: String
    /// The namespace URI, `""` for none.
    let namespace: String
    /// The name as written, prefix included.
    let qualifiedName: String
    /// The attributes in document order, without the `xmlns` declarations; each name once
    /// (a repeated attribute keeps its first value).
    let attributes: [XMLAttribute]

    /// The value of the attribute written `qualifiedName` (`href`, `xml:base`, `rdf:about`).
    func attribute(_ qualifiedName: String) -> String? {
        attributes.first { $0.qualifiedName == qualifiedName }?.value
    }

    /// The value of attribute `name` in `namespace`, whatever prefix the document gave it.
    func attribute(_ name: String, namespace: String) -> String? {
        attributes.first { $0.name == name && $0.namespace == namespace }?.value
    }
}

/// One attribute of an ``XMLElement``, its value with references decoded and its white space
/// normalized as XML says (tabs and line breaks become spaces).
struct XMLAttribute {
    let qualifiedName: String
    /// The local name; an attribute without a prefix is in no namespace.
    let name: String
    let namespace: String
    let value: String
}

/// The namespace URIs of the prefixes in scope while ``XMLReader`` reads: a stack of
/// declarations, each element's popped when it closes.
struct XMLNamespaceScope {
    /// The `xml` prefix, bound by definition.
    static let xml = "http://www.w3.org/XML/1998/namespace"

    private var bindings: [(prefix: String, uri: String)] = [("xml", xml)]

    /// How many declarations are in scope: what ``pop(to:)`` returns to.
    var mark: Int { bindings.count }

    /// Binds `prefix` (`""` for the default namespace) until the current element closes. An
    /// empty URI undeclares the default namespace.
    mutating func declare(_ prefix: String, _ uri: String) {
        bindings.append((prefix, uri))
    }

    mutating func pop(to mark: Int) {
        bindings.removeLast(bindings.count - mark)
    }

    /// The URI bound to `prefix`, nil when it is not declared.
    func uri(of prefix: Substring) -> String? {
        for binding in bindings.reversed() where binding.prefix == prefix { return binding.uri }
        return nil
    }

    /// The local name and namespace of `qualifiedName`; `isAttribute` because an attribute
    /// without a prefix is in no namespace, not in the default one.
    func resolve(_ qualifiedName: String, isAttribute: Bool) -> (name: String, namespace: String) {
        guard let colon = qualifiedName.utf8.firstIndex(of: UInt8(ascii: ":")) else {
            return (qualifiedName, isAttribute ? "" : uri(of: "") ?? "")
        }
        let prefix = qualifiedName[..<colon]
        let local = qualifiedName[qualifiedName.index(after: colon)...]
        guard !local.isEmpty, let uri = uri(of: prefix), !uri.isEmpty else { return (qualifiedName, "") }
        return (String(local), uri)
    }
}
