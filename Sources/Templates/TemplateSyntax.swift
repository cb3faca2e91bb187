/// The compiled form of a template expression: parsed once at load, evaluated per state change.
indirect enum Expression: Sendable {
    case literal(TemplateValue)
    /// A name `{% set %}` or `{% for %}` made.
    case variable(String)
    case list([Expression])
    /// `{'key': value, …}`
    case dictionary([(key: Expression, value: Expression)])
    /// `value[start:stop:step]`, each part optional.
    case slice(Expression, start: Expression?, stop: Expression?, step: Expression?)
    /// `states.sensor.washer`: the entity as an object with state, attributes, last_changed…
    case entity(String)
    /// `states.sensor`: the domain's entities as objects, by entity id.
    case domainStates(String)
    /// `states` on its own: every entity as an object, by entity id.
    case allStates
    case unary(UnaryOperator, Expression)
    case binary(BinaryOperator, Expression, Expression)
    case and(Expression, Expression)
    case or(Expression, Expression)
    case conditional(condition: Expression, then: Expression, otherwise: Expression?)
    case call(Function, [Expression], keywords: [(String, Expression)])
    // Fast forms of the calls nearly every rule makes, chosen at compile time (no argument arrays at run time).
    /// `states('id')`
    case stateOf(String)
    /// `state_attr('id', 'name')`
    case attributeOf(String, String)
    /// `is_state('id', 'value')`
    case isState(String, String)
    /// `has_value('id')`
    case hasValue(String)
    /// `x | float(d)` and `x | int(d)` with a literal default or none
    case number(Expression, integer: Bool, fallback: TemplateValue?)
    case filter(Filter, Expression, [Expression], keywords: [(String, Expression)])
    case attribute(Expression, String)
    /// `value.total_seconds()`, `value.isoformat()`, `text.lower()`…
    case method(Expression, Method, [Expression], keywords: [(String, Expression)])
    case item(Expression, Expression)
    case test(Expression, TestKind, negated: Bool)
    /// `x is divisibleby 3`, `x is in [1, 2]`, `x is gt 0`…: Jinja's tests that take a value.
    case namedTest(Expression, String, argument: Expression?, negated: Bool)
    /// A call of a macro the template defined earlier.
    case macroCall(Macro, [Expression], keywords: [(String, Expression)])
    /// `items | map('apply', fn, …)`: `body` evaluated once per item of the first, the item bound to
    /// `Expression.eachItem`.
    case each(Expression, body: Expression)
}

/// What `apply` and `map('apply', …)` call: a macro the template defined, or one of the functions.
enum CallableReference: Sendable {
    case macro(Macro)
    case function(Function)
}

extension Expression {
    /// The name `each` binds its item to: no template can write it.
    static let eachItem = "\u{0}item"

    /// The sub-expressions evaluated to evaluate this one.
    var children: [Expression] {
        switch self {
        case .literal, .variable, .entity, .domainStates, .allStates, .stateOf, .attributeOf, .isState, .hasValue: return []
        case .list(let items): return items
        case .dictionary(let pairs): return pairs.flatMap { [$0.key, $0.value] }
        case .slice(let base, let start, let stop, let step): return [base] + [start, stop, step].compactMap { $0 }
        case .unary(_, let e), .attribute(let e, _), .test(let e, _, _), .number(let e, _, _): return [e]
        case .namedTest(let e, _, let argument, _): return [e] + (argument.map { [$0] } ?? [])
        case .binary(_, let l, let r), .and(let l, let r), .or(let l, let r), .item(let l, let r): return [l, r]
        case .conditional(let c, let t, let o): return [c, t] + (o.map { [$0] } ?? [])
        case .call(_, let args, let keywords), .macroCall(_, let args, let keywords): return args + keywords.map(\.1)
        case .each(let items, let body): return [items, body]
        case .filter(_, let input, let args, let keywords): return [input] + args + keywords.map(\.1)
        case .method(let base, _, let args, let keywords): return [base] + args + keywords.map(\.1)
        }
    }

    /// Levels of evaluation this expression needs, counted without recursion (the tree may be deeper than the
    /// stack allows; that is what this measures).
    var depth: Int {
        var deepest = 0
        var pending: [(Expression, Int)] = [(self, 1)]
        while let (expression, level) = pending.popLast() {
            deepest = max(deepest, level)
            for child in expression.children { pending.append((child, level + 1)) }
        }
        return deepest
    }
}

enum UnaryOperator: Sendable { case negate, plus, not }

enum BinaryOperator: String, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", floorDivide = "//", modulo = "%", power = "**"
    case concat = "~"
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case contains = "in", notContains = "not in"
}

enum TestKind: String, Sendable, CaseIterable {
    case defined, undefined, none, number, string, even, odd
}

/// Functions callable in templates. Those taking an entity id take it as a literal, so the entities a rule reads are known at load.
enum Function: String, Sendable, CaseIterable {
    case states, stateAttr = "state_attr", isState = "is_state", isStateAttr = "is_state_attr", hasValue = "has_value"
    case now, utcnow
    case asTimestamp = "as_timestamp", asDatetime = "as_datetime", asTimedelta = "as_timedelta", timedelta
    case float, int, round, abs, min, max, bool
    case iif, isNumber = "is_number", sqrt, log, sin, cos, tan, range, average, namespace
    case asLocal = "as_local", median, statisticalMode = "statistical_mode"
    case relativeTime = "relative_time", timeSince = "time_since", timeUntil = "time_until", todayAt = "today_at"
    case slugify, strptime, urlencode, asin, acos, atan, atan2, typeof, flatten, expand, dict
    case tuple, zip, combine, set, union, intersect, difference, symmetricDifference = "symmetric_difference"
    case md5, sha1, sha256, sha512, clamp, wrap, remap, timedeltaString = "timedelta_string"
    case bitwiseAnd = "bitwise_and", bitwiseOr = "bitwise_or", bitwiseXor = "bitwise_xor"
    case distance, closest, shuffle

    var readsEntity: Bool {
        switch self {
        case .states, .stateAttr, .isState, .isStateAttr, .hasValue: return true
        default: return false
        }
    }
}

enum Filter: String, Sendable, CaseIterable {
    case float, int, round, `default`, d, upper, lower, title, capitalize, trim, replace, abs, min, max
    case timestampCustom = "timestamp_custom", asTimestamp = "as_timestamp", asDatetime = "as_datetime"
    case asTimedelta = "as_timedelta", string, length, count, join, first, last, bool
    case iif, isNumber = "is_number", sqrt, log, sin, cos, tan, sum, average, sort, list, unique
    case asLocal = "as_local", fromJSON = "from_json", toJSON = "to_json", format
    case median, statisticalMode = "statistical_mode", ord, base64Encode = "base64_encode", base64Decode = "base64_decode"
    case truncate, center, wordcount, map, select, reject, selectattr, rejectattr
    case relativeTime = "relative_time", timeSince = "time_since", timeUntil = "time_until", todayAt = "today_at"
    case regexMatch = "regex_match", regexSearch = "regex_search", regexReplace = "regex_replace"
    case regexFindall = "regex_findall", regexFindallIndex = "regex_findall_index", slugify
    case batch, groupby, dictsort, reverse, flatten, indent, multiply, add, contains, ordinal
    case timestampLocal = "timestamp_local", timestampUTC = "timestamp_utc", asin, acos, atan, atan2
    case isDefined = "is_defined", typeof
    case timedeltaString = "timedelta_string"
    case tojson, slice, urlencode, union, intersect, difference, symmetricDifference = "symmetric_difference"
    case md5, sha1, sha256, sha512, clamp, wrap, remap
    case bitwiseAnd = "bitwise_and", bitwiseOr = "bitwise_or", bitwiseXor = "bitwise_xor", combine
    case closest, shuffle
    /// Jinja's `items` and `escape` (`e`, `forceescape`), `safe` and `filesizeformat`; Home Assistant's `random`.
    case items, escape, e, forceescape, safe, filesizeformat, random
}

/// Methods of values that Home Assistant templates commonly call.
enum Method: String, Sendable, CaseIterable {
    case totalSeconds = "total_seconds", timestamp, isoformat, strftime
    case lower, upper, strip, split, startswith, endswith, replace
    case items, keys, values, weekday, isoweekday, format, join, get, count, index, title, capitalize
    case lstrip, rstrip, isdigit, zfill, date, time, today, astimezone, find
    case rsplit, splitlines, ljust, rjust, center, removeprefix, removesuffix, rfind, rindex, partition, rpartition
    case isalpha, isnumeric, isdecimal, isalnum, isspace, islower, isupper, swapcase
}
