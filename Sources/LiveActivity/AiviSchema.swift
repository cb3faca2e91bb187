import Platform
public import JSON

/// Aivi's templates (generic, monitor, progress), field for field as its current reference spells them.
public enum AiviSchema {
    /// SwiftUI system colours by their Aivi identifiers.
    public static let colors = ["red", "orange", "yellow", "green", "mint", "teal", "cyan", "blue", "indigo", "purple",
                                "pink", "brown", "gray", "gray2", "gray3", "gray4", "gray5", "gray6"]
    public static let formatters = ["time_since", "time_until"]
    public static let templates = ["generic", "monitor", "progress"]

    static let color = FieldSchema.choice(name: "colour", colors)

    /// `{value, text_color, formatter}`; bare text stands for `{value: text}`. With a formatter the value must be an ISO 8601 time.
    public static let value = ObjectSchema([
        required("value", .text()),
        optional("text_color", color),
        optional("formatter", .choice(name: "formatter", formatters)),
    ], shorthand: "value", checks: [{ object, path in
        guard let formatter = object["formatter"]?.stringValue, let text = object["value"]?.stringValue else { return [] }
        guard Timestamp.epoch(fromISO8601: text) == nil else { return [] }
        return [PayloadIssue(path: joinedPath(path, "value"), "\"\(text)\" is not an ISO 8601 timestamp, which \(formatter) needs")]
    }])

    public static let icon = FieldSchema.scalarOrObject(.text(maxLength: 100), ObjectSchema([
        required("name", .text(maxLength: 100)),
        optional("rendering_mode", .choice(name: "rendering mode", ["monochrome", "hierarchical", "palette", "multicolor"])),
        optional("primary_color", color),
        optional("secondary_color", color),
        optional("tertiary_color", color),
        optional("color_rendering", .choice(name: "color rendering", ["flat", "gradient"])),
    ], shorthand: "name"))

    static let column = ObjectSchema([
        optional("header", .text()),
        required("value", .object(value)),
        optional("footer", .text()),
    ])

    static let segment = ObjectSchema([
        required("value", .number(0...1)),
        required("fill_color", color),
        optional("track_color", color),
        optional("track_fill", .choice(name: "track fill", ["solid", "hatched"])),
        optional("label", .text()),
    ])

    public static let progressBar = FieldSchema.tagged(key: "style", [
        "simple": ObjectSchema([
            required("style", .choice(name: "style", ["simple"])),
            required("value", .number(0...1)),
            optional("color", color),
        ]),
        "segmented": ObjectSchema([
            required("style", .choice(name: "style", ["segmented"])),
            required("value", .number(0...1)),
            required("segments", .list(.object(segment), count: 1...4)),
            optional("display", .choice(name: "display", ["split", "layered"])),
        ], checks: [{ object, path in
            guard case .array(let segments)? = object["segments"] else { return [] }
            let sum = segments.compactMap { $0["value"]?.doubleValue }.reduce(0, +)
            guard abs(sum - 1) > 0.001 else { return [] }
            return [PayloadIssue(path: joinedPath(path, "segments"), "segment values sum to \(PayloadNormalizer.format((sum * 1000).rounded() / 1000)); they must sum to 1.0")]
        }]),
    ])

    static let common: [ObjectSchema.Field] = [optional("icon", icon), optional("tap_url", .url)]

    public static let generic = ObjectSchema([
        required("template", .choice(name: "template", ["generic"])),
        required("progress", .number(0...1)),
        optional("state", .text()),
        optional("remaining_time", .integer(0...Int(Int32.max))),
    ] + common)

    public static let monitor = ObjectSchema([
        required("template", .choice(name: "template", ["monitor"])),
        optional("left_column", .object(column)),
        optional("right_column", .object(column)),
        optional("primary_column", .choice(name: "column", ["left", "right"])),
    ] + common)

    public static let progress = ObjectSchema([
        required("template", .choice(name: "template", ["progress"])),
        required("progress", progressBar),
        optional("header_left", .object(value)),
        optional("header_right", .object(value)),
        optional("footer_left", .object(value)),
        optional("footer_right", .object(value)),
        optional("compact_value", .object(value)),
    ] + common)

    /// Any Aivi content, chosen by its `template` key.
    public static let content = FieldSchema.tagged(key: "template", ["generic": generic, "monitor": monitor, "progress": progress])
}

extension BackendKind {
    public static let aivi = BackendKind(named: "aivi")
}

extension AiviSchema: PushService {
    public static let definition = BackendDefinition(
        kind: .aivi, name: "Aivi", idKey: "slug",
        idProblem: { id in
            guard (1...BackendKind.longestID).contains(id.unicodeScalars.count), id.unicodeScalars.allSatisfy(BackendKind.isSlugScalar) else {
                return "\(BackendKind.shown(id)) is not an Aivi slug: letters, digits, _ and -, at most \(BackendKind.longestID)"
            }
            return nil
        },
        methods: ["PATCH"], idPath: "/activity/", otherTarget: nil,
        configKeys: ["type", "token", "base_url"], needsToken: true, templates: AiviSchema.templates,
        defaultDismissAfter: BackendDefinition.lockScreenDismissAfter, defaultSettle: .zero, requestsPerMinute: nil,
        baseURL: "https://api.getaivi.app", spendsRelay: false, contentShare: .bodyLessWrapper, authScheme: "Token",
        movingParts: { PayloadMeasure.contentParts(&$0) },
        codes: [ServiceCode("ACTIVITY_ALREADY_RUNNING", .alreadyRunning, status: 409), ServiceCode("UNAUTHORIZED", .credentialsRefused)])
}

extension BackendRequest {
    /// Aivi: `PATCH /activity/{slug}` with the activity's state (`IDLE` for the end, else `ONGOING`) and content.
    public static func aivi(backend: String, slug: String, kind: PushKind, content: JSONValue) -> BackendRequest {
        BackendRequest(backend: backend, kind: .aivi, method: "PATCH", target: "/activity/\(slug)",
                       body: ["state": kind == .end ? "IDLE" : "ONGOING", "content": content])
    }
}
