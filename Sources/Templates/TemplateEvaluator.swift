import FoundationEssentials
import Platform
import HomeAssistant
import JSON

/// Evaluates a compiled `Expression`. Never crashes: everything that cannot be computed is an `EvaluationError`.
struct TemplateEvaluator {
    let context: EvaluationContext
    /// The variables of a template with statements; nil for a lone expression, which has none.
    var scope: TemplateScope? = nil

    /// `has_value`: the entity exists and is neither unknown nor unavailable.
    static func hasValue(_ state: EntityState?) -> Bool {
        guard let state = state?.state else { return false }
        return state != "unknown" && state != "unavailable"
    }

    /// `is_state` with one expected state: the entity exists and is in it.
    static func isState(_ state: EntityState?, _ expected: String) -> Bool { state?.state == expected }

    func evaluate(_ expression: Expression) throws(EvaluationError) -> TemplateValue {
        try RenderBudget.spend(1, "an expression")
        switch expression {
        case .literal(let value):
            return value
        case .dictionary(let pairs):
            var members = TemplateMapping()
            for (keyExpression, valueExpression) in pairs {
                let key = try evaluate(keyExpression)
                guard case .string(let name) = key else {
                    throw EvaluationError("mapping keys must be text here, got \(key.typeName) \(key.repr)")
                }
                members[name] = try evaluate(valueExpression)
            }
            try EvaluationLimits.checkNesting(members.orderedValues, "a dict")
            return .mapping(members)
        case .slice(let base, let start, let stop, let step):
            let value = try evaluate(base)
            func bound(_ e: Expression?) throws(EvaluationError) -> Int? {
                guard let e else { return nil }
                let v = try evaluate(e)
                if v == .none { return nil }
                guard let i = v.integer else { throw EvaluationError("slice bounds must be integers, got \(v.typeName) \(v.repr)") }
                return i
            }
            let (from, to, by) = (try bound(start), try bound(stop), try bound(step) ?? 1)
            switch value {
            case .list(let items): return .list(try Self.slice(items, from, to, by))
            case .string(let s): return .string(PythonText.string(try Self.slice(PythonText.scalars(s), from, to, by)))
            default: throw EvaluationError("cannot slice \(value.typeName) \(value.repr)")
            }
        case .variable(let name):
            guard let value = scope?.lookup(name) else { return .undefined("'\(name)' is undefined") }
            return value
        case .list(let items):
            var values: [TemplateValue] = []
            for item in items { values.append(try evaluate(item)) }
            try EvaluationLimits.checkNesting(values, "a list")
            return .list(values)
        case .entity(let id):
            guard let state = context.state(id) else { return .none }
            return try Self.entityObject(state, zone: context.timeZone)
        case .domainStates(let domain):
            // In the state machine's order, as Home Assistant 2026's templates iterate (no longer sorted by id).
            let prefix = domain + "."
            return .list(try context.inStateMachineOrder(prefix: prefix).map { id throws(EvaluationError) in try Self.entityObject(context.states[id]!, zone: context.timeZone) })
        case .allStates:
            return .list(try context.inStateMachineOrder().map { id throws(EvaluationError) in try Self.entityObject(context.states[id]!, zone: context.timeZone) })
        case .unary(let op, let operand):
            let value = try evaluate(operand)
            switch op {
            case .not: return .bool(!value.isTruthy)
            case .plus:
                guard value.number != nil else { throw EvaluationError("cannot apply unary + to \(value.typeName)") }
                return value
            case .negate:
                switch value {
                case .int(let i):
                    guard i != .min else { throw EvaluationError.integerOverflow("-(\(i))") }
                    return .int(-i)
                case .bool(let b): return .int(b ? -1 : 0)
                case .double(let d): return .double(-d)
                case .timedelta(let s): return .timedelta(-s)
                default: throw EvaluationError("cannot negate \(value.typeName) \(value.repr)")
                }
            }
        case .binary(let op, let left, let right):
            return try Arithmetic.apply(op, try evaluate(left), try evaluate(right))
        case .and(let left, let right):
            let l = try evaluate(left)
            return l.isTruthy ? try evaluate(right) : l
        case .or(let left, let right):
            let l = try evaluate(left)
            return l.isTruthy ? l : try evaluate(right)
        case .conditional(let condition, let then, let otherwise):
            if try evaluate(condition).isTruthy { return try evaluate(then) }
            return try otherwise.map { e throws(EvaluationError) in try evaluate(e) } ?? .string("")
        case .call(let function, let arguments, let keywords):
            var values: [TemplateValue] = []
            for argument in arguments { values.append(try evaluate(argument)) }
            var named: [String: TemplateValue] = [:]
            if !keywords.isEmpty { for (name, e) in keywords { named[name] = try evaluate(e) } }
            return try Self.bounded(try Functions.call(function, values, named, context: context))
        case .stateOf(let id):
            return .string(context.state(id)?.state ?? "unknown")
        case .attributeOf(let id, let name):
            return context.state(id)?.attribute(name).map(TemplateValue.init) ?? .none
        case .isState(let id, let value):
            return .bool(Self.isState(context.state(id), value))
        case .hasValue(let id):
            return .bool(Self.hasValue(context.state(id)))
        case .number(let input, let integer, let fallback):
            let value = try evaluate(input)
            if case .undefined(let why) = value { throw EvaluationError(why) }
            return try Conversions.number(value, integer: integer, fallback: fallback)
        case .filter(let filter, let input, let arguments, let keywords):
            let value: TemplateValue
            do {
                value = try evaluate(input)
            } catch {
                // `default` is the way out of a failed lookup.
                if filter == .default || filter == .d, let fallback = arguments.first { return try evaluate(fallback) }
                throw error
            }
            var values: [TemplateValue] = []
            if !arguments.isEmpty {
                values.reserveCapacity(arguments.count)
                for argument in arguments { values.append(try evaluate(argument)) }
            }
            var named: [String: TemplateValue] = [:]
            if !keywords.isEmpty { for (name, e) in keywords { named[name] = try evaluate(e) } }
            return try Self.bounded(try Filters.apply(filter, value, values, named, context: context))
        case .attribute(let base, let name):
            let value = try evaluate(base)
            if case .undefined(let why) = value { throw EvaluationError("\(why): it has no attribute \"\(name)\"") }
            if let field = try Self.timeField(value, name) { return field }
            // A groupby group: [grouper, list], as Jinja's named tuple answers .grouper and .list.
            if case .list(let pair) = value, pair.count == 2, case .list = pair[1], name == "grouper" || name == "list" {
                return pair[name == "grouper" ? 0 : 1]
            }
            // A domain's states (`states[domain].washer`): the entity by its object id.
            if let entity = Self.entity(named: name, among: value) { return entity }
            // Jinja: an attribute not there is undefined (printed as nothing), not an error.
            guard case .mapping(let members) = value, let member = members[name] else {
                return .undefined("\(value.typeName) has no attribute \"\(name)\"")
            }
            return member
        case .method(let base, let method, let arguments, let keywords):
            let value = try evaluate(base)
            var args: [TemplateValue] = []
            for argument in arguments { args.append(try evaluate(argument)) }
            var named: [String: TemplateValue] = [:]
            for (name, e) in keywords { named[name] = try evaluate(e) }
            return try Self.bounded(try Methods.call(method, on: value, args, named, context: context))
        case .item(let base, let key):
            // states[name]: an entity by its id, or a domain's states, named when the template runs.
            if case .allStates = base { return try Self.states(named: try evaluate(key), in: context) }
            let container = try evaluate(base)
            let index = try evaluate(key)
            if case .undefined(let why) = container { throw EvaluationError("\(why): it has no item \(index.repr)") }
            if case .string(let name) = index, let entity = Self.entity(named: name, among: container) { return entity }
            // Jinja: a key or index not there is undefined, not an error.
            switch (container, index) {
            case (.mapping(let m), .string(let k)):
                return m[k] ?? .undefined("no key \(index.repr)")
            case (.list(let l), .int(let i)):
                let position = i < 0 ? l.count + i : i
                guard l.indices.contains(position) else { return .undefined("list index \(i) out of range") }
                return l[position]
            case (.string(let s), .int(let i)):
                let characters = PythonText.scalars(s)
                let position = i < 0 ? characters.count + i : i
                guard characters.indices.contains(position) else { return .undefined("string index \(i) out of range") }
                return .string(String(characters[position]))
            default:
                return .undefined("\(container.typeName) has no item \(index.repr)")
            }
        case .macroCall(let macro, let arguments, let keywords):
            // Its own scope: the arguments, then the defaults; the caller's names are not seen, as in Jinja.
            let inner = TemplateScope(parent: nil)
            for (i, parameter) in macro.parameters.enumerated() {
                if i < arguments.count { inner.set(parameter, try evaluate(arguments[i])); continue }
                if let keyword = keywords.first(where: { $0.0 == parameter }) { inner.set(parameter, try evaluate(keyword.1)); continue }
                if let fallback = macro.defaults[i] { inner.set(parameter, try TemplateEvaluator(context: context, scope: inner).evaluate(fallback)); continue }
                // Jinja: a parameter with no argument and no default is undefined inside the macro.
                inner.set(parameter, .undefined("no argument for the macro's parameter \(parameter)"))
            }
            var out = ""
            try TemplateRenderer(context: context).render(macro.body, into: &out, scope: inner)
            return .string(out)
        case .each(let items, let body):
            var out: [TemplateValue] = []
            for item in try TemplateRenderer.iterate(try evaluate(items)) {
                let inner = TemplateScope(parent: scope)
                inner.set(Expression.eachItem, item)
                out.append(try TemplateEvaluator(context: context, scope: inner).evaluate(body))
            }
            return .list(out)
        case .namedTest(let operand, let name, let argument, let negated):
            let result = try Sequences.test(name, try evaluate(operand), try argument.map { e throws(EvaluationError) in try evaluate(e) })
            return .bool(negated ? !result : result)
        case .test(let operand, let test, let negated):
            let result: Bool
            switch test {
            case .defined, .undefined:
                let defined: Bool
                do { if case .undefined = try evaluate(operand) { defined = false } else { defined = true } } catch { defined = false }
                result = test == .defined ? defined : !defined
            case .none: result = (try? evaluate(operand)) == TemplateValue.none
            case .number, .string, .even, .odd:
                result = try Sequences.test(test.rawValue, try evaluate(operand), nil)
            }
            return .bool(negated ? !result : result)
        }
    }

    /// Text a filter, method or function made: at most `EvaluationLimits.maximumTextLength` (`upper` of 'ß' doubles
    /// its text, base64 adds a third: none may pass the bound).
    static func bounded(_ value: TemplateValue) throws(EvaluationError) -> TemplateValue {
        if case .string(let s) = value { try EvaluationLimits.checkLength(s.utf8.count, "the text made") }
        return value
    }

    /// Python's `items[start:stop:step]`: negative bounds count from the end, bounds are clamped, a step may go back.
    static func slice<T>(_ items: [T], _ start: Int?, _ stop: Int?, _ step: Int) throws(EvaluationError) -> [T] {
        guard step != 0 else { throw EvaluationError("slice step cannot be zero") }
        let n = items.count
        func clamp(_ i: Int?, _ fallback: Int, low: Int, high: Int) -> Int {
            guard let i else { return fallback }
            let j = i < 0 ? i + n : i
            return min(max(j, low), high)
        }
        var out: [T] = []
        if step > 0 {
            var i = clamp(start, 0, low: 0, high: n)
            let end = clamp(stop, n, low: 0, high: n)
            while i < end {
                out.append(items[i])
                let (next, overflow) = i.addingReportingOverflow(step)
                if overflow { break }
                i = next
            }
        } else {
            var i = clamp(start, n - 1, low: -1, high: n - 1)
            let end = clamp(stop, -1, low: -1, high: n - 1)
            while i > end {
                out.append(items[i])
                let (next, overflow) = i.addingReportingOverflow(step)
                if overflow { break }
                i = next
            }
        }
        return out
    }

    /// A datetime's fields in its own zone (`now().hour`), a timedelta's (`delta.days`); nil for other values.
    static func timeField(_ value: TemplateValue, _ name: String) throws(EvaluationError) -> TemplateValue? {
        if let field = try CalendarValues.field(value, name) { return field }
        switch value {
        case .datetime(let t, let offset):
            let c = Timestamp.components(TemplateValue.wallTime(t, offset))
            switch name {
            case "year": return .int(c.year)
            case "month": return .int(c.month)
            case "day": return .int(c.day)
            case "hour": return .int(c.hour)
            case "minute": return .int(c.minute)
            case "second": return .int(c.second)
            case "microsecond": return .int(c.microsecond)
            default: throw EvaluationError("datetime \(value.repr) has no attribute \"\(name)\"; it has year, month, day, hour, minute, second, microsecond")
            }
        case .timedelta(let seconds):
            // Python normalises to days, then 0 ≤ seconds < 86400, then microseconds.
            let days = (seconds / 86_400).rounded(.down)
            let rest = seconds - days * 86_400
            switch name {
            case "days": return .int(Int(days))
            case "seconds": return .int(Int(rest.rounded(.down)))
            case "microseconds": return .int(Int(((rest - rest.rounded(.down)) * 1_000_000).rounded()))
            default: throw EvaluationError("timedelta \(value.repr) has no attribute \"\(name)\"; it has days, seconds, microseconds")
            }
        default:
            return nil
        }
    }

    /// `states[name]`: the entity (None when it is not there) for an entity id, the domain's states for a domain.
    static func states(named key: TemplateValue, in context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        guard case .string(let name) = key else { return .undefined("states has no item \(key.repr)") }
        if name.contains(".") { return try context.state(name).map { state throws(EvaluationError) in try entityObject(state, zone: context.timeZone) } ?? .none }
        return .list(try context.inStateMachineOrder(prefix: name + ".").map { id throws(EvaluationError) in try entityObject(context.states[id]!, zone: context.timeZone) })
    }

    /// In a domain's states (`states[domain]`, `states.light`), the entity whose object id is `name`; nil when
    /// `container` is not a list of states, None when none has that id (as Home Assistant's domain states answer).
    static func entity(named name: String, among container: TemplateValue) -> TemplateValue? {
        guard case .list(let items) = container, case .mapping(let first)? = items.first, first["object_id"] != nil, first["entity_id"] != nil,
              first["domain"] != nil else { return nil }
        for item in items {
            if case .mapping(let members) = item, members["object_id"] == .string(name) { return item }
        }
        return TemplateValue.none
    }

    static func entityObject(_ state: EntityState, zone: LocalTimeZone) throws(EvaluationError) -> TemplateValue {
        // Charged by its attributes: a hostile entity of 20,000 attributes built in a loop stops at the render's budget.
        try RenderBudget.spend(state.attributes.count + 1, "a state object")
        var attributes = TemplateMapping()
        for (key, value) in state.attributes { attributes[key] = TemplateValue(value) }
        let objectID = state.entityID.split(separator: ".").last.map(String.init) ?? state.entityID
        let name = state.attribute("friendly_name")?.stringValue ?? objectID.replacingAll("_", with: " ")
        var object: TemplateMapping = [
            "entity_id": .string(state.entityID), "state": .string(state.state), "attributes": .mapping(attributes),
            "last_changed": .datetime(state.lastChanged), "last_updated": .datetime(state.lastUpdated),
            // Not kept apart: Home Assistant's last_reported is last_updated until an unchanged report comes.
            "last_reported": .datetime(state.lastUpdated),
            "name": .string(name), "domain": .string(String(state.entityID.split(separator: ".").first ?? "")),
            "object_id": .string(objectID),
        ]
        object.entity = TemplateMapping.EntityObject(state: state, zone: zone)
        return .mapping(object)
    }
}
