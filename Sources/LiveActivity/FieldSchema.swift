public import JSON

/// The shape of a payload, as data: one description serves the load-time check of a rules file (where the
/// constant parts are checked at their line and column) and the render-time check of every payload.
public indirect enum FieldSchema: Sendable {
    /// Text; `maxLength` in characters.
    case text(maxLength: Int? = nil)
    /// A number within `range`.
    case number(ClosedRange<Double>)
    case integer(ClosedRange<Int>)
    /// Progress as 0–1, or 0–100 normalised to 0–1 (values above 1 are percentages).
    case percentOrFraction
    case boolean
    /// One of fixed words; `name` says what they are in messages ("colour", "style").
    case choice(name: String, [String])
    /// A URL with a scheme (any scheme: https, homeassistant://, myapp://).
    case url
    case list(FieldSchema, count: ClosedRange<Int>)
    /// A mapping of names the payload chooses (a series label, say) to values of one kind; `count` names at most.
    case map(FieldSchema, keyMaxLength: Int, count: ClosedRange<Int>)
    /// An object. `shorthand`: a bare scalar stands for `{shorthand: scalar}` (e.g. a Value given as text).
    case object(ObjectSchema)
    /// Either a plain scalar of the first kind or an object of the second (an icon: a name, or an Icon object).
    case scalarOrObject(FieldSchema, ObjectSchema)
    /// An object whose shape depends on one key (`style: simple | segmented`).
    case tagged(key: String, [String: ObjectSchema])
    /// A value checked by a function (hex or CSS colour…); returns the problem or nil.
    case custom(name: String, check: @Sendable (String) -> String?)
}

public struct ObjectSchema: Sendable {
    public struct Field: Sendable {
        public let name: String
        public let schema: FieldSchema
        public let required: Bool
    }

    public let fields: [Field]
    public let shorthand: String?
    private let index: [String: Int]
    /// The names a payload must give, in the schema's order.
    public let requiredNames: [String]
    /// Checks across fields (segments sum to 1, per-layout lengths), run on the finished object.
    public let checks: [@Sendable ([String: JSONValue], String) -> [PayloadIssue]]

    public init(_ fields: [Field], shorthand: String? = nil, checks: [@Sendable ([String: JSONValue], String) -> [PayloadIssue]] = []) {
        self.fields = fields
        self.shorthand = shorthand
        self.checks = checks
        self.index = Dictionary(fields.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.requiredNames = fields.filter(\.required).map(\.name)
    }

    public func field(_ name: String) -> Field? { index[name].map { fields[$0] } }
    public var names: [String] { fields.map(\.name) }
}

public func required(_ name: String, _ schema: FieldSchema) -> ObjectSchema.Field {
    .init(name: name, schema: schema, required: true)
}

public func optional(_ name: String, _ schema: FieldSchema) -> ObjectSchema.Field {
    .init(name: name, schema: schema, required: false)
}
