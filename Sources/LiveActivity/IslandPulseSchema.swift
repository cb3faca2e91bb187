import Platform
public import JSON

/// Island Pulse's `POST /notify` body and its four layouts, with the length limits of its layout reference.
public enum IslandPulseSchema {
    public static let layouts = ["default", "progress", "score", "sports"]
    public static let statuses = ["running", "success", "failed"]

    /// Characters that fit each field per layout, with text scaling (beyond these the app cuts the text).
    public static let limits: [String: [String: Int]] = [
        "progress": ["metric": 15, "message": 80],
        "score": ["metric": 16, "message": 45, "secondaryMetric": 10],
        "sports": ["metricA": 6, "metricB": 6, "subA": 10, "subB": 10, "secondaryMetric": 12],
    ]

    public static func jobIDProblem(_ id: String) -> String? {
        guard (1...64).contains(id.count) else { return "job_id \(OutsideText.quoted(id)) must be 1–64 characters" }
        guard id.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" })
        else { return "job_id \(OutsideText.quoted(id)) may hold only letters, digits, _ and -" }
        return nil
    }

    public static let body = ObjectSchema([
        required("job_id", .custom(name: "a job id", check: jobIDProblem)),
        optional("title", .text()),
        optional("message", .text()),
        optional("status", .choice(name: "status", statuses)),
        optional("action", .choice(name: "action", ["start", "update", "end"])),
        optional("layout", .choice(name: "layout", layouts)),
        optional("theme", .text()),
        optional("metric", .text()),
        optional("progress", .percentOrFraction),
        optional("secondaryMetric", .text()),
        optional("metricA", .text()),
        optional("metricB", .text()),
        optional("subA", .text()),
        optional("subB", .text()),
        optional("icon", .text(maxLength: 100)),
        optional("accentColor", .custom(name: "a colour", check: CSSColor.problem)),
    ], checks: [{ object, path in
        var issues: [PayloadIssue] = []
        // The reference requires message to start or update; its own sports examples go without (the layout shows none).
        let layout = object["layout"]?.stringValue ?? "default"
        if object["action"]?.stringValue != "end", layout != "sports", (object["message"]?.stringValue ?? "").isEmpty {
            issues.append(PayloadIssue(path: joinedPath(path, "message"), "is required to start or update"))
        }
        for (field, limit) in (limits[layout] ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let text = object[field]?.stringValue, text.unicodeScalars.count > limit {
                issues.append(PayloadIssue(path: joinedPath(path, field), "\"\(text)\" is \(text.unicodeScalars.count) characters; the \(layout) layout shows at most \(limit)"))
            }
        }
        return issues
    }])
}

/// `#RGB`, `#RRGGBB`, `#RRGGBBAA` or a CSS colour name.
public enum CSSColor {
    public static let names: Set<String> = [
        "aliceblue", "antiquewhite", "aqua", "aquamarine", "azure", "beige", "bisque", "black", "blanchedalmond", "blue",
        "blueviolet", "brown", "burlywood", "cadetblue", "chartreuse", "chocolate", "coral", "cornflowerblue", "cornsilk",
        "crimson", "cyan", "darkblue", "darkcyan", "darkgoldenrod", "darkgray", "darkgreen", "darkgrey", "darkkhaki",
        "darkmagenta", "darkolivegreen", "darkorange", "darkorchid", "darkred", "darksalmon", "darkseagreen", "darkslateblue",
        "darkslategray", "darkslategrey", "darkturquoise", "darkviolet", "deeppink", "deepskyblue", "dimgray", "dimgrey",
        "dodgerblue", "firebrick", "floralwhite", "forestgreen", "fuchsia", "gainsboro", "ghostwhite", "gold", "goldenrod",
        "gray", "green", "greenyellow", "grey", "honeydew", "hotpink", "indianred", "indigo", "ivory", "khaki", "lavender",
        "lavenderblush", "lawngreen", "lemonchiffon", "lightblue", "lightcoral", "lightcyan", "lightgoldenrodyellow",
        "lightgray", "lightgreen", "lightgrey", "lightpink", "lightsalmon", "lightseagreen", "lightskyblue", "lightslategray",
        "lightslategrey", "lightsteelblue", "lightyellow", "lime", "limegreen", "linen", "magenta", "maroon",
        "mediumaquamarine", "mediumblue", "mediumorchid", "mediumpurple", "mediumseagreen", "mediumslateblue",
        "mediumspringgreen", "mediumturquoise", "mediumvioletred", "midnightblue", "mintcream", "mistyrose", "moccasin",
        "navajowhite", "navy", "oldlace", "olive", "olivedrab", "orange", "orangered", "orchid", "palegoldenrod", "palegreen",
        "paleturquoise", "palevioletred", "papayawhip", "peachpuff", "peru", "pink", "plum", "powderblue", "purple",
        "rebeccapurple", "red", "rosybrown", "royalblue", "saddlebrown", "salmon", "sandybrown", "seagreen", "seashell",
        "sienna", "silver", "skyblue", "slateblue", "slategray", "slategrey", "snow", "springgreen", "steelblue", "tan", "teal",
        "thistle", "tomato", "turquoise", "violet", "wheat", "white", "whitesmoke", "yellow", "yellowgreen",
    ]

    public static func problem(_ text: String) -> String? {
        if text.hasPrefix("#") {
            let digits = text.dropFirst()
            if [3, 6, 8].contains(digits.count), digits.allSatisfy(\.isHexDigit) { return nil }
            return "\"\(text)\" is not a hex colour (#RGB or #RRGGBB)"
        }
        if names.contains(text.lowercased()) { return nil }
        var message = "unknown colour \"\(text)\""
        message += Suggestion.didYouMean(text, in: names.sorted())
        return message + "; use #RRGGBB or a CSS colour name"
    }
}

extension BackendKind {
    public static let islandpulse = BackendKind(named: "islandpulse")
}

extension IslandPulseSchema: PushService {
    public static let definition = BackendDefinition(
        kind: .islandpulse, name: "Island Pulse", idKey: "job_id", idProblem: IslandPulseSchema.jobIDProblem,
        methods: ["POST"], idPath: nil,
        otherTarget: { $0 == "/notify" ? nil : "\(BackendKind.shown($0)) is not Island Pulse's /notify" },
        configKeys: ["type", "token", "base_url", "tier"], needsToken: true, templates: IslandPulseSchema.layouts + ["monitor", "generic"],
        defaultDismissAfter: BackendDefinition.lockScreenDismissAfter, defaultSettle: .zero, requestsPerMinute: nil,
        baseURL: "https://api.islandpulse.dev", spendsRelay: false, contentShare: .body,
        movingParts: movingParts,
        codes: [
            ServiceCode("ACTIVITY_ALREADY_RUNNING", .alreadyRunning, status: 409),
            ServiceCode("FREE_TIER_JOB_LOCKED", .oneAtATime, status: 403),
            ServiceCode("DEVICE_NOT_REGISTERED", .notRegistered, status: 404,
                        explanation: "the app has not registered this ID yet; open it on the phone once, then check the ID in the rules",
                        limitReason: "the Island Pulse app has not registered this ID yet (DEVICE_NOT_REGISTERED): open it on the phone once"),
            ServiceCode("MISSING_UNIQUE_ID", .credentialsRefused),
        ],
        // The documents give no format for it: ISO 8601 text, or seconds or milliseconds since 1970, are read.
        lockExpiryField: "expiresAt")

    /// Its bar: `progress`, 0–1 or a percentage above 1 (as Island Pulse reads it).
    static func movingParts(_ body: inout JSONValue) -> PayloadMeasure.MovingParts {
        guard case .object(var object) = body, let value = object["progress"]?.doubleValue else { return .init() }
        object["progress"] = .null
        body = .object(object)
        return .init(progress: value > 1 ? value / 100 : value)
    }
}

extension BackendRequest {
    /// Island Pulse: `POST /notify` with the job's whole body (its `job_id` and `action` included).
    public static func islandPulse(backend: String, body: JSONValue) -> BackendRequest {
        BackendRequest(backend: backend, kind: .islandpulse, method: "POST", target: "/notify", body: body)
    }
}
