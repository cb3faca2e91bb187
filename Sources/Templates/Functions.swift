import FoundationEssentials
import HomeAssistant
import JSON

/// The global functions of the template language.
enum Functions {
    static func call(_ function: Function, _ args: [TemplateValue], _ keywords: [String: TemplateValue],
                     context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        func argument(_ i: Int) throws(EvaluationError) -> TemplateValue {
            guard i < args.count else { throw EvaluationError("\(function.rawValue)() needs \(i + 1) argument\(i == 0 ? "" : "s")") }
            return args[i]
        }
        func entity() throws(EvaluationError) -> (String, EntityState?) {
            guard case .string(let id) = try argument(0) else { throw EvaluationError("\(function.rawValue)() needs an entity id") }
            return (id, context.state(id))
        }
        switch function {
        case .states:
            let (_, state) = try entity()
            guard let state else { return .string("unknown") }
            // with_unit appends the unit as it is; Home Assistant renders `rounded=True` (its registry's display
            // precision), so that never reaches here.
            let withUnit = (keywords.isEmpty ? nil : keywords["with_unit"])?.isTruthy ?? false
            if withUnit, let unit = state.attribute("unit_of_measurement")?.stringValue, !unit.isEmpty {
                return .string(state.state + " " + unit)
            }
            return .string(state.state)
        case .stateAttr:
            let (_, state) = try entity()
            guard case .string(let name) = try argument(1) else { throw EvaluationError("state_attr() needs an attribute name") }
            return state?.attribute(name).map(TemplateValue.init) ?? .none
        case .isState:
            let (_, state) = try entity()
            guard let state else { return .bool(false) }
            switch try argument(1) {
            case .list(let options): return .bool(options.contains(.string(state.state)))
            case let value: return .bool(value.text == state.state)
            }
        case .isStateAttr:
            let (_, state) = try entity()
            guard case .string(let name) = try argument(1) else { throw EvaluationError("is_state_attr() needs an attribute name") }
            let expected = try argument(2)
            guard let actual = state?.attribute(name) else { return .bool(false) }
            return .bool(Arithmetic.equal(TemplateValue(actual), expected))
        case .hasValue:
            let (_, state) = try entity()
            return .bool(TemplateEvaluator.hasValue(state))
        case .now:
            // Home Assistant's now() is in its configured zone; utcnow() in UTC.
            return .datetime(context.now, offset: context.timeZone.secondsFromGMT(at: context.now))
        case .utcnow:
            return .datetime(context.now)
        case .asTimestamp:
            return try Filters.apply(.asTimestamp, try argument(0), Array(args.dropFirst()), keywords, context: context)
        case .asDatetime:
            return try Filters.apply(.asDatetime, try argument(0), Array(args.dropFirst()), keywords, context: context)
        case .asTimedelta:
            return try Filters.apply(.asTimedelta, try argument(0), Array(args.dropFirst()), keywords, context: context)
        case .timedelta:
            var seconds = 0.0
            let units: [(String, Double)] = [("weeks", 604_800), ("days", 86_400), ("hours", 3600), ("minutes", 60), ("seconds", 1), ("milliseconds", 0.001)]
            for (name, value) in keywords {
                guard let scale = units.first(where: { $0.0 == name })?.1 else {
                    throw EvaluationError("timedelta() has no argument \"\(name)\"; use weeks, days, hours, minutes, seconds, milliseconds")
                }
                guard let n = value.number else { throw EvaluationError("timedelta(\(name)=…) needs a number, got \(value.typeName) \(value.repr)") }
                seconds += n * scale
            }
            for (i, value) in args.enumerated() {
                // Positional order as Python's: days, seconds.
                guard i < 2, let n = value.number else { throw EvaluationError("timedelta() takes days and seconds positionally; use keywords") }
                seconds += n * (i == 0 ? 86_400 : 1)
            }
            return try .timedelta(checked: seconds)
        case .float, .int, .round, .abs, .bool:
            let filter: Filter = switch function {
            case .float: .float
            case .int: .int
            case .round: .round
            case .bool: .bool
            default: .abs
            }
            return try Filters.apply(filter, try argument(0), Array(args.dropFirst()), keywords, context: context)
        case .min, .max:
            let items = args.count == 1 ? (args[0].listItems ?? args) : args
            return try Filters.apply(function == .min ? .min : .max, .list(items), [], keywords, context: context)
        case .todayAt:
            return try Filters.apply(.todayAt, args.first ?? .string(""), [], [:], context: context)
        case .iif, .isNumber, .sqrt, .log, .sin, .cos, .tan, .asLocal, .relativeTime, .timeSince, .timeUntil,
             .slugify, .asin, .acos, .atan, .atan2, .typeof, .flatten:
            // The same as the filter of the name, its first argument the value.
            let filter = Filter(rawValue: function.rawValue)!
            if function == .atan2, args.count <= 2, let pair = args.first?.listItems {
                // atan2([y, x]) or atan2([y, x], default)
                return try Filters.apply(.atan2, pair.first ?? .none, Array(pair.dropFirst()) + Array(args.dropFirst()), keywords, context: context)
            }
            return try Filters.apply(filter, try argument(0), Array(args.dropFirst()), keywords, context: context)
        case .strptime:
            let text = try argument(0), format = try argument(1)
            if case .string(let t) = text, case .string(let f) = format, let parsed = Strptime.parse(t, f) { return parsed }
            if let fallback = args.count > 2 ? args[2] : keywords["default"] { return fallback }
            throw EvaluationError("strptime got invalid input \(text.repr) for the format \(format.repr)")
        case .urlencode:
            // Python's urlencode of a mapping (core 2026.x returns text; 2025.x returned bytes, printed b'…').
            guard case .mapping(let members) = try argument(0) else { throw EvaluationError("urlencode needs a mapping") }
            let query = members.keys.map { PercentEncoding.plus($0) + "=" + PercentEncoding.plus(members[$0]!.text) }
            return .string(query.joined(separator: "&"))
        case .bitwiseAnd, .bitwiseOr, .bitwiseXor:
            // Home Assistant's bitwise_and(a, b) and friends, on integers.
            guard args.count == 2, let a = args[0].integer, let b = args[1].integer else {
                throw EvaluationError("\(function.rawValue) needs two integers")
            }
            return .int(function == .bitwiseAnd ? a & b : function == .bitwiseOr ? a | b : a ^ b)
        case .zip:
            // zip(a, b, …): tuples (lists here) of the items at each position, as long as the shortest.
            let lists = try args.map { value throws(EvaluationError) in try TemplateRenderer.iterate(value) }
            let count = lists.map(\.count).min() ?? 0
            return .list((0..<count).map { i in .list(lists.map { $0[i] }) })
        case .combine:
            // combine(a, b, …, recursive=false): the mappings merged, later keys winning.
            guard !args.isEmpty else { throw EvaluationError("combine expected at least 1 argument, got 0") }
            let recursive = keywords["recursive"]?.isTruthy ?? false
            func merge(_ a: TemplateMapping, _ b: TemplateMapping) -> TemplateMapping {
                var out = a
                for (key, value) in b {
                    if recursive, case .mapping(let x)? = out[key], case .mapping(let y) = value { out[key] = .mapping(merge(x, y)) } else { out[key] = value }
                }
                return out
            }
            var result = TemplateMapping()
            for arg in args {
                guard case .mapping(let members) = arg else { throw EvaluationError("combine expected a dict, got \(arg.pythonTypeName)") }
                result = merge(result, members)
            }
            return .mapping(result)
        case .set:
            return try SetOperations.set(try argument(0))
        case .union, .intersect, .difference, .symmetricDifference:
            return try SetOperations.apply(SetOperations.Operation(rawValue: function.rawValue)!, try argument(0), try argument(1))
        case .timedeltaString:
            return try Filters.apply(.timedeltaString, try argument(0), Array(args.dropFirst()), keywords, context: context)
        case .clamp: return try RangeMath.clamp(args)
        case .wrap: return try RangeMath.wrap(args)
        case .remap: return try RangeMath.remap(args, keywords)
        case .md5, .sha1, .sha256, .sha512:
            return .string(Digests.hexDigest(Digests.Kind(rawValue: function.rawValue)!, of: try argument(0).text))
        case .tuple:
            // tuple(iterable), held as a list.
            return .list(args.isEmpty ? [] : try TemplateRenderer.iterate(args[0]))

        case .average, .median, .statisticalMode:
            // average([1, 2]) or average(1, 2): a list and an optional default, or the numbers themselves.
            let filter = Filter(rawValue: function.rawValue)!
            if let items = args.first?.listItems {
                return try Filters.apply(filter, .list(items), Array(args.dropFirst()), keywords, context: context)
            }
            guard args.count > 1 else { throw EvaluationError("\(function.rawValue) needs a list or at least two values") }
            return try Filters.apply(filter, .list(args), [], keywords, context: context)
        case .expand:
            return .list(try Self.expand(args, states: context.states, zone: context.timeZone))
        case .distance: return try Locations.distance(args, context: context)
        case .closest: return try Locations.closest(args, context: context)
        case .shuffle: return try Shuffle.shuffle(args, seed: keywords["seed"])
        case .dict:
            // dict(a=1) or dict(mapping, a=1): a mapping, the keywords added.
            var members = TemplateMapping()
            if let first = args.first {
                switch first {
                case .mapping(let m): members = m.asDict
                case .list(let pairs):
                    // dict([['a', 1], ['b', 2]]): key-value pairs.
                    for pair in pairs {
                        guard case .list(let kv) = pair, kv.count == 2, case .string(let key) = kv[0] else {
                            throw EvaluationError("dict() needs pairs of a text key and a value, got \(pair.repr)")
                        }
                        members[key] = kv[1]
                    }
                default: throw EvaluationError("dict() needs a mapping, pairs or keywords, got \(first.typeName)")
                }
            }
            for key in keywords.keys.sorted() { members[key] = keywords[key] }
            return .mapping(members)
        case .namespace:
            // A namespace is a mapping whose attributes `{% set ns.x = … %}` changes where it was made.
            return .mapping(TemplateMapping(sorting: keywords))
        case .range:
            let bounds = try args.map { value throws(EvaluationError) -> Int in
                guard let i = value.integer else { throw EvaluationError("range() needs integers, got \(value.typeName) \(value.repr)") }
                return i
            }
            let (start, stop, step) = switch bounds.count {
            case 1: (0, bounds[0], 1)
            case 2: (bounds[0], bounds[1], 1)
            case 3: (bounds[0], bounds[1], bounds[2])
            default: throw EvaluationError("range() takes 1 to 3 arguments")
            }
            guard step != 0 else { throw EvaluationError("range() step must not be zero") }
            // The span may pass 64 bits (range(-2**63, 2**63-1)); counted in magnitudes it cannot overflow.
            let forward = step > 0
            let (low, high) = forward ? (start, stop) : (stop, start)
            let total: UInt = high > low ? (UInt(bitPattern: high &- low) - 1) / step.magnitude + 1 : 0
            guard total <= UInt(EvaluationLimits.maximumTextLength) else {
                throw EvaluationError("range(\(bounds.map(String.init).joined(separator: ", "))) has \(total) numbers; the limit is \(EvaluationLimits.maximumTextLength)")
            }
            let count = Int(total)
            try RenderBudget.spend(count, "range()")
            return .list((0..<count).map { .int(start &+ $0 &* step) })
        }
    }
}

extension Functions {
    /// Home Assistant's `expand(…)`: entity ids, entity objects and lists of them, groups (and any entity with an
    /// `entity_id` list) replaced by their members, zones by their persons; each entity once, missing ones left out,
    /// in the order Home Assistant's search finds them (it takes the last pending one first).
    static func expand(_ args: [TemplateValue], states: [String: EntityState], zone: LocalTimeZone) throws(EvaluationError) -> [TemplateValue] {
        var search = args
        var found: [String] = []
        var seen: Set<String> = []
        while let item = search.popLast() {
            let id: String
            switch item {
            case .string(let s): id = s
            case .mapping(let m): guard case .string(let s)? = m["entity_id"] else { continue }; id = s
            case .list(let items): search += items; continue
            default: continue
            }
            guard !seen.contains(id), let state = states[id] else { continue }
            // Marked before its members are looked at, so a group that contains itself ends.
            seen.insert(id)
            let domain = id.prefix { $0 != "." }
            // A group: its members. Home Assistant also expands the group integration's entities of other domains (a
            // light group), which it tells by the entity's source; states alone do not say, so those stay as they are.
            if domain == "group" {
                if let members = state.attribute("entity_id")?.arrayValue { search += members.map(TemplateValue.init) }
            } else if domain == "zone" {
                if let persons = state.attribute("persons")?.arrayValue { search += persons.map(TemplateValue.init) }
            } else {
                found.append(id)
            }
        }
        return try found.map { id throws(EvaluationError) in try TemplateEvaluator.entityObject(states[id]!, zone: zone) }
    }
}

extension TemplateValue {
    var listItems: [TemplateValue]? {
        if case .list(let items) = self { return items }
        return nil
    }
}

/// Python's `quote_plus`: letters, digits and `_.-~` as they are, a space as `+`, every other byte `%XX`.
enum PercentEncoding {
    /// Python's `quote(text, safe)`: as `plus`, but a space is `%20` and the `safe` characters stay.
    static func quote(_ text: String, safe: String) -> String {
        var out = ""
        let hex = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where byte < 128 && safe.utf8.contains(byte):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return out
    }

    static func plus(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "): out += "+"
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return out
    }
}
