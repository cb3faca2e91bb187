import Platform
import JSON

/// What the phone shows for one payload, independent of drawing: texts with colours, a bar, columns.
/// Built from an Aivi content (or its `{state, content}` body) or an Island Pulse body, at a given time.
struct ActivityPresentation: Equatable {
    struct Label: Equatable {
        var text: String
        var color: String = PreviewPalette.text
    }

    struct Segment: Equatable {
        var value: Double
        var fill: String
        var track: String
        var hatched: Bool
        var label: String?
    }

    struct Bar: Equatable {
        var value: Double
        var color: String
        var segments: [Segment] = []
        var layered = false
    }

    struct Column: Equatable {
        var header: String?
        var value: Label
        var footer: String?
    }

    enum Body: Equatable {
        case progress(headerLeft: Label?, headerRight: Label?, bar: Bar?, footerLeft: Label?, footerRight: Label?)
        case monitor(left: Column?, right: Column?, primaryRight: Bool)
        case generic(state: Label?, bar: Bar?, remaining: String?)
        case pulse(layout: String, title: String, status: String, message: String?, metric: String?, secondary: String?,
                   bar: Bar?, metricA: String?, metricB: String?, subA: String?, subB: String?)
    }

    var source: String
    var icon: String?
    var accent: String
    var body: Body
    var compact: Label?

    init(payload: JSONValue, at now: Double) {
        let content = payload["content"] ?? payload
        if let state = payload["content_state"], let type = state["type"]?.stringValue {
            self.init(activitySmith: state, type: type)
            return
        }
        // PushWard's body says its state in lower case (`ongoing`, `ended`); Aivi's in capitals.
        if let state = payload["state"]?.stringValue, state == "ongoing" || state == "ended", let template = content["template"]?.stringValue {
            self.init(pushWard: content, template: template, at: now)
        } else if let template = content["template"]?.stringValue {
            self.init(aivi: content, template: template, at: now)
        } else {
            self.init(islandPulse: payload)
        }
    }

    private init(aivi content: JSONValue, template: String, at now: Double) {
        source = "aivi " + template
        icon = content["icon"]?.stringValue ?? content["icon"]?["name"]?.stringValue
        accent = PreviewPalette.color(content["icon"]?["primary_color"]?.stringValue, default: PreviewPalette.identifiers["blue"]!)
        switch template {
        case "monitor":
            let left = Self.column(content["left_column"], at: now)
            let right = Self.column(content["right_column"], at: now)
            let primaryRight = content["primary_column"] == "right"
            body = .monitor(left: left, right: right, primaryRight: primaryRight)
            compact = (primaryRight ? right : left)?.value ?? (primaryRight ? left : right)?.value
        case "generic":
            let progress = content["progress"]?.doubleValue ?? 0
            let remaining = content["remaining_time"]?.intValue.map { Self.clock(Double($0)) + " left" }
            let accentColor = accent
            body = .generic(state: content["state"]?.stringValue.map { Label(text: $0) }, bar: Bar(value: progress, color: accentColor), remaining: remaining)
            compact = Label(text: "\(Int(saturating: (progress * 100).rounded()))%")
        default:
            let bar = Self.bar(content["progress"])
            body = .progress(headerLeft: Self.value(content["header_left"], at: now), headerRight: Self.value(content["header_right"], at: now),
                             bar: bar, footerLeft: Self.value(content["footer_left"], at: now), footerRight: Self.value(content["footer_right"], at: now))
            compact = Self.value(content["compact_value"], at: now) ?? bar.map { Label(text: "\(Int(saturating: ($0.value * 100).rounded()))%") }
        }
    }

    /// PushWard's templates on the same card: the state as the headline, the template's figure on the right (a
    /// countdown's time left, a step of the steps, a gauge's value), the bar, the subtitle below.
    private init(pushWard content: JSONValue, template: String, at now: Double) {
        source = "pushward " + template
        icon = content["icon"]?.stringValue
        accent = PreviewPalette.color(content["accent_color"]?.stringValue, default: PreviewPalette.identifiers["blue"]!)
        if template == "board", let tiles = content["tiles"]?.arrayValue, !tiles.isEmpty {
            // A board draws its first two tiles as the two columns of a monitor; the subtitle under them.
            let columns = tiles.prefix(2).map { tile in
                Column(header: tile["label"]?.stringValue,
                       value: Label(text: (tile["value"]?.stringValue ?? "") + (tile["unit"]?.stringValue.map { " " + $0 } ?? "")
                                    + (Self.trendArrows[tile["trend"]?.stringValue ?? ""] ?? ""),
                                    color: PreviewPalette.color(tile["color"]?.stringValue)),
                       footer: nil)
            }
            body = .monitor(left: columns.first, right: columns.count > 1 ? columns[1] : nil, primaryRight: false)
            compact = columns.first?.value
            return
        }
        var progress = content["progress"]?.doubleValue
        var right: Label?
        var headline = content["state"]?.stringValue
        var subtitle = content["subtitle"]?.stringValue
        switch template {
        case "timeline":
            // The primary series (or the first by name) and its latest value.
            if let series = content["value"]?.objectValue, let name = content["primary_series"]?.stringValue ?? series.keys.sorted().first,
               let value = series[name]?.doubleValue {
                let unit = content["units"]?[name]?.stringValue ?? content["unit"]?.stringValue
                right = Label(text: Self.number(value) + (unit.map { " " + $0 } ?? ""))
                headline = headline ?? name
            }
        case "log":
            // The newest line as the headline, the one before it below.
            let lines = content["lines"]?.arrayValue?.compactMap { $0["text"]?.stringValue ?? $0.stringValue } ?? []
            headline = lines.last ?? headline
            subtitle = lines.count > 1 ? lines[lines.count - 2] : subtitle
        case "media":
            headline = content["media_title"]?.stringValue ?? headline
            if let position = content["position_seconds"]?.doubleValue, let duration = content["duration_seconds"]?.doubleValue, duration > 0 {
                progress = min(max(position / duration, 0), 1)
                right = Label(text: Self.clock(position) + " / " + Self.clock(duration))
            } else if let state = content["playback_state"]?.stringValue {
                right = Label(text: state.prefix(1).uppercased() + state.dropFirst())
            }
        case "countdown":
            if let end = content["end_date"]?.doubleValue {
                right = Label(text: Self.clock(max(0, end - now)))
                if let start = content["start_date"]?.doubleValue, end > start { progress = min(max((now - start) / (end - start), 0), 1) }
            }
        case "steps":
            if let current = content["current_step"]?.intValue, let total = content["total_steps"]?.intValue, total > 0 {
                right = Label(text: "Step \(current)/\(total)")
                progress = progress ?? Double(current) / Double(total)
            }
        case "alert":
            let severity = content["severity"]?.stringValue ?? "info"
            right = Label(text: content["severity_label"]?.stringValue ?? severity.prefix(1).uppercased() + severity.dropFirst(),
                          color: PreviewPalette.color(severity == "critical" ? "red" : severity == "warning" ? "orange" : "blue"))
        case "gauge":
            if let value = content["value"]?.doubleValue {
                right = Label(text: Self.number(value) + (content["unit"]?.stringValue.map { " " + $0 } ?? ""))
                if let low = content["min_value"]?.doubleValue, let high = content["max_value"]?.doubleValue, high > low {
                    progress = min(max((value - low) / (high - low), 0), 1)
                }
            }
        default:
            right = content["remaining_time"]?.intValue.map { Label(text: Self.clock(Double($0)) + " left") }
        }
        let accentColor = accent
        body = .progress(headerLeft: headline.map { Label(text: $0) }, headerRight: right,
                         bar: progress.map { Bar(value: min(max($0, 0), 1), color: accentColor) },
                         footerLeft: subtitle.map { Label(text: $0, color: PreviewPalette.secondary) }, footerRight: nil)
        compact = right ?? progress.map { Label(text: "\(Int(saturating: ($0 * 100).rounded()))%") }
    }

    /// A figure as the phone shows it: whole numbers without a decimal point.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    static let trendArrows = ["up": " ↑", "down": " ↓", "flat": " →"]

    /// ActivitySmith's stream types: the title as the headline, the type's figure on the right (a percentage, a step,
    /// the first metric), the bar, the subtitle (or an alert's message) below.
    private init(activitySmith state: JSONValue, type: String) {
        source = "activitysmith " + type
        icon = state["icon"]?["name"]?.stringValue
        accent = PreviewPalette.color(state["color"]?.stringValue, default: PreviewPalette.identifiers["blue"]!)
        var progress: Double?
        var right: Label?
        switch type {
        case "segmented_progress":
            if let current = state["current_step"]?.intValue, let steps = state["number_of_steps"]?.intValue, steps > 0 {
                progress = Double(current) / Double(steps)
                right = Label(text: "\(current)/\(steps)")
            }
        case "metrics", "stats":
            if let first = state["metrics"]?.arrayValue?.first, let value = first["value"]?.stringValue ?? first["value"]?.doubleValue.map({ "\($0)" }) {
                right = Label(text: value + (first["unit"]?.stringValue.map { " " + $0 } ?? ""))
            }
        case "alert":
            break
        case "timer":
            // The timer as it was set: its duration counting down, or 0:00 counting up (the phone runs it from there).
            right = Label(text: state["counts_down"] == .bool(false) ? "0:00" : Self.clock(Double(state["duration_seconds"]?.intValue ?? 0)))
        default:  // progress
            if let percentage = state["percentage"]?.doubleValue {
                progress = percentage / 100
            } else if let value = state["value"]?.doubleValue, let limit = state["upper_limit"]?.doubleValue, limit > 0 {
                progress = value / limit
            }
            right = progress.map { Label(text: "\(Int(saturating: ($0 * 100).rounded()))%") }
        }
        let accentColor = accent
        let below = (type == "alert" ? state["message"] : state["subtitle"])?.stringValue
        body = .progress(headerLeft: state["title"]?.stringValue.map { Label(text: $0) }, headerRight: right,
                         bar: progress.map { Bar(value: min(max($0, 0), 1), color: accentColor) },
                         footerLeft: below.map { Label(text: $0, color: PreviewPalette.secondary) }, footerRight: nil)
        compact = right
    }

    private init(islandPulse body: JSONValue) {
        let layout = body["layout"]?.stringValue ?? "default"
        let status = body["status"]?.stringValue ?? "running"
        source = "islandpulse " + layout
        icon = body["icon"]?.stringValue
        let accentColor = PreviewPalette.accent(body["accentColor"]?.stringValue) ?? PreviewPalette.status(status)
        accent = accentColor
        let progress = body["progress"]?.doubleValue.map { $0 > 1 ? $0 / 100 : $0 }
        self.body = .pulse(layout: layout, title: body["title"]?.stringValue ?? body["job_id"]?.stringValue ?? "Island Pulse", status: status,
                           message: body["message"]?.stringValue, metric: body["metric"]?.stringValue,
                           secondary: body["secondaryMetric"]?.stringValue,
                           bar: progress.map { Bar(value: $0, color: accentColor) },
                           metricA: body["metricA"]?.stringValue, metricB: body["metricB"]?.stringValue,
                           subA: body["subA"]?.stringValue, subB: body["subB"]?.stringValue)
        switch layout {
        case "sports": compact = Label(text: "\(body["metricA"]?.stringValue ?? "–")–\(body["metricB"]?.stringValue ?? "–")")
        case "progress": compact = Label(text: body["metric"]?.stringValue ?? progress.map { "\(Int(saturating: ($0 * 100).rounded()))%" } ?? "")
        default: compact = body["metric"]?.stringValue.map { Label(text: $0) } ?? Label(text: status, color: PreviewPalette.status(status))
        }
    }

    /// A Value as shown: a formatter turns an ISO time into the ticking timer's value at `now`.
    static func value(_ json: JSONValue?, at now: Double) -> Label? {
        guard let json, let raw = json["value"]?.stringValue ?? json.stringValue else { return nil }
        let color = PreviewPalette.color(json["text_color"]?.stringValue)
        switch json["formatter"]?.stringValue {
        case "time_until":
            guard let when = Timestamp.epoch(fromISO8601: raw) else { return Label(text: raw, color: color) }
            return Label(text: clock(max(0, when - now)), color: color)
        case "time_since":
            guard let when = Timestamp.epoch(fromISO8601: raw) else { return Label(text: raw, color: color) }
            return Label(text: clock(max(0, now - when)), color: color)
        default:
            return Label(text: raw, color: color)
        }
    }

    /// `M:SS` under an hour, `H:MM:SS` above, as the system timer text shows.
    static func clock(_ seconds: Double) -> String {
        let total = Int(saturating: min(max(seconds, 0), 1e12).rounded(.down))
        let (h, m, s) = (total / 3600, total % 3600 / 60, total % 60)
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }

    static func column(_ json: JSONValue?, at now: Double) -> Column? {
        guard let json, let value = value(json["value"], at: now) else { return nil }
        return Column(header: json["header"]?.stringValue, value: value, footer: json["footer"]?.stringValue)
    }

    static func bar(_ json: JSONValue?) -> Bar? {
        guard let json, let value = json["value"]?.doubleValue else { return nil }
        let color = PreviewPalette.color(json["color"]?.stringValue, default: PreviewPalette.identifiers["blue"]!)
        // A bar has a handful of segments, each a share of it: clamped before any drawing arithmetic.
        let segments = (json["segments"]?.arrayValue ?? []).prefix(32).map { segment in
            Segment(value: PreviewRenderer.fraction(segment["value"]?.doubleValue ?? 0),
                    fill: PreviewPalette.color(segment["fill_color"]?.stringValue, default: PreviewPalette.identifiers["green"]!),
                    track: PreviewPalette.color(segment["track_color"]?.stringValue, default: PreviewPalette.track),
                    hatched: segment["track_fill"] == "hatched", label: segment["label"]?.stringValue)
        }
        return Bar(value: PreviewRenderer.fraction(value), color: color, segments: Array(segments), layered: json["display"] == "layered")
    }
}
