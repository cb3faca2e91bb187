import FoundationEssentials
import JSON
import LiveActivity
import Platform
import Templates

/// Home Assistant's own Live Activities: `live_update` (its fields), and Aivi's progress/generic shown as a live
/// update; a call of the phone's notify service.
struct LiveUpdateRendering: BackendRendering {
    var ruleKeys: Set<String> { ["dismiss_after"] }

    /// `service`: the phone's notify service, or a list of them (a family's phones), each a target of its own.
    func decodeBackend(_ reader: MappingReader, into backend: inout RulesFile.Backend, errors: inout [ConfigError]) {
        let path = reader.path
        guard let named = reader.strings("service", errors: &errors) else {
            errors.append(ConfigError(reader.node.location, path: path + ".service",
                                      "is required, e.g. notify.mobile_app_my_iphone (or a list of them, one per phone)"))
            return
        }
        for (text, at) in named {
            if let problem = LiveUpdateSchema.serviceProblem(text) {
                errors.append(ConfigError(at, path: path + ".service", problem))
            } else if backend.services.contains(text) {
                errors.append(ConfigError(at, path: path + ".service", "\"\(text)\" is named twice"))
            } else {
                backend.services.append(text)
            }
        }
    }

    func schema(template: String) -> ObjectSchema? {
        switch template {
        case "generic", "progress": return TemplateCatalog.aivi(template)
        case "live_update": return LiveUpdateSchema.fields.removing(["tag"])
        default: return nil
        }
    }

    func resolve(template: String, reader: MappingReader, others: Set<BackendKind>) -> (ObjectSchema?, PayloadMapping) {
        if template == "progress" || template == "generic" { return (TemplateCatalog.aivi(template), .fromAivi(template)) }
        return (schema(template: template), .native)
    }

    func mappingNote(template: String) -> String {
        "a live update: the bar as an integer progress of 100, tap_url as url, the right-hand text as critical_text, a countdown (time_until, remaining_time) as a chronometer"
    }

    func request(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                 context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError> {
        let now = context.now
        return self.fields(fields, of: rule, at: target, templateKey: nil) { LiveUpdateMapping.map(template: $0, $1, now: now) }.flatMap { fields in
            var body = fields
            body["tag"] = .string(target.id)
            let (normalized, issues) = PayloadNormalizer.normalize(.object(body), as: .object(LiveUpdateSchema.fields))
            guard issues.isEmpty, var object = normalized?.objectValue else { return .failure(PayloadIssuesError(issues)) }
            if phase != .end, object["stale_date"] == nil, let stale = Self.staleDate(object, now: now) { object["stale_date"] = .int(stale) }
            return .success(.homeAssistant(backend: target.backend.name, service: target.service, fields: object, kind: phase,
                                           dismissAfter: rule.dismissAfter(for: .homeassistant), now: now))
        }
    }

    /// When the Lock Screen should show a live update as out of date if no other push comes: a minute past its
    /// countdown's end (the content says nothing true after it). Derived from the content only, so an unchanged
    /// content renders the same push and is not sent again; nil without a countdown.
    static func staleDate(_ fields: [String: JSONValue], now: Double) -> Int? {
        guard let when = fields["when"]?.doubleValue, fields["when_relative"]?.boolValue != true, when > now else { return nil }
        return Int(saturating: when + 60)
    }

    func fallbackEnd(_ rule: ActivityRule, _ target: ActivityTarget, last: BackendRequest?, now: Double) -> BackendRequest {
        .homeAssistant(backend: target.backend.name, service: target.service, fields: ["tag": .string(target.id)], kind: .end,
                       dismissAfter: .zero, now: now)
    }

    func renewalEnd(_ rule: ActivityRule, _ target: ActivityTarget, start: BackendRequest, now: Double) -> BackendRequest {
        fallbackEnd(rule, target, last: start, now: now)
    }

    /// A blueprint event's request(s): the payload as written for this service, checked against its schema.
    func eventRequests(_ payload: [String: JSONValue], activity: String, backend: RulesFile.Backend, action: ActivityEvent.Action)
        -> Result<[(target: String, request: BackendRequest)], PayloadIssuesError> {
        var fields = payload
        fields["tag"] = .string(activity)
        if action == .end, fields["message"] == nil { fields["message"] = "" }
        let schema = action == .end ? LiveUpdateSchema.fields.allOptional : LiveUpdateSchema.fields
        let (normalized, problems) = PayloadNormalizer.normalize(.object(fields), as: .object(schema), path: "payload")
        guard problems.isEmpty, let object = normalized?.objectValue else { return .failure(PayloadIssuesError(problems)) }
        let now = Date().timeIntervalSince1970
        guard backend.services.count > 1 else {
            return .success([(backend.name, .homeAssistant(backend: backend.name, service: backend.service, fields: object,
                                                           kind: action == .end ? .end : .update, dismissAfter: .zero, now: now))])
        }
        // Every phone the backend names, each its own lane.
        return .success(backend.services.map { service in
            (backend.name + "/" + service, .homeAssistant(backend: backend.name, service: service, fields: object,
                                                          kind: action == .end ? .end : .update, dismissAfter: .zero, now: now))
        })
    }
}

extension LiveUpdateSchema: RenderedService {
    static let rendering: any BackendRendering = LiveUpdateRendering()
}

/// Aivi progress and generic templates shown as Home Assistant live updates: the bar in percent (integers: the app
/// drops floats), a countdown as a chronometer, the trailing text as `critical_text`, `tap_url` as `url`.
enum LiveUpdateMapping {
    static func map(template: String, _ content: [String: JSONValue], now: Double) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["progress_max": 100]
        if let url = content["tap_url"] { fields["url"] = url }
        switch template {
        case "progress":
            if let p = content["progress"]?["value"]?.doubleValue { fields["progress"] = .int(Int(saturating: (p * 100).rounded())) }
            fields["message"] = content["header_left"]?["value"] ?? content["footer_left"]?["value"] ?? ""
            for slot in ["header_right", "footer_right", "header_left", "footer_left"] {
                if content[slot]?["formatter"] == "time_until", let text = content[slot]?["value"]?.stringValue,
                   let epoch = Timestamp.epoch(fromISO8601: text) {
                    fields["when"] = .double(epoch)
                    fields["chronometer"] = true
                    break
                }
            }
            // The trailing text: the right-hand value that is not the countdown.
            for slot in ["header_right", "footer_right"] where content[slot]?["formatter"] == nil {
                if let text = content[slot]?["value"], text.stringValue?.isEmpty == false {
                    fields["critical_text"] = text
                    break
                }
            }
        default:  // generic
            if let p = content["progress"]?.doubleValue { fields["progress"] = .int(Int(saturating: (p * 100).rounded())) }
            fields["message"] = content["state"] ?? ""
            if let remaining = content["remaining_time"]?.doubleValue {
                fields["when"] = .double(now + remaining)
                fields["chronometer"] = true
            }
        }
        return fields
    }
}
