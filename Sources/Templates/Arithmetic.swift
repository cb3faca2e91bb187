import Glibc
import FoundationEssentials

/// Python's operators over template values, including datetime and timedelta arithmetic.
enum Arithmetic {
    static func apply(_ op: BinaryOperator, _ l: TemplateValue, _ r: TemplateValue) throws(EvaluationError) -> TemplateValue {
        // Undefined compares unequal to everything but itself, prints as nothing and holds nothing; anything else
        // done with it fails, as Jinja's Undefined does.
        if case .undefined(let why) = l, ![.equal, .notEqual, .concat, .contains, .notContains].contains(op) { throw EvaluationError(why) }
        if case .undefined(let why) = r, ![.equal, .notEqual, .concat, .contains, .notContains].contains(op) { throw EvaluationError(why) }
        switch op {
        case .concat: return .string(try joined(l.text, r.text, "~"))
        case .equal: return .bool(equal(l, r))
        case .notEqual: return .bool(!equal(l, r))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            // NaN is neither below nor above anything (Python's float).
            if let a = l.number, let b = r.number, !l.isText, !r.isText, a.isNaN || b.isNaN { return .bool(false) }
            let order = try compare(l, r)
            switch op {
            case .less: return .bool(order < 0)
            case .lessOrEqual: return .bool(order <= 0)
            case .greater: return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        case .contains, .notContains:
            let found: Bool
            switch r {
            case .string(let s):
                guard case .string(let needle) = l else { throw EvaluationError("'in <string>' needs a string on the left") }
                try EvaluationLimits.chargeSearch(needle, in: s, "in")
                found = PythonText.contains(s, needle)
            case .list(let items):
                // A scan of the list: charged, so select('in', a long list) over a long list is bounded.
                try RenderBudget.spend(items.count / 16 + 1, "in")
                found = items.contains { equal($0, l) }
            case .mapping(let m):
                guard case .string(let key) = l else { throw EvaluationError("'in <mapping>' needs a string key") }
                found = m[key] != nil
            case .undefined: found = false
            default: throw EvaluationError("cannot test membership in \(r.typeName)")
            }
            return .bool(op == .contains ? found : !found)
        default:
            return try numeric(op, l, r)
        }
    }

    /// Python's ==: numbers across int, float and bool; lists and dicts item by item with the same rule (`{'a': 1} ==
    /// {'a': 1.0}`), each step charged to the render, so values that share parts cannot make it walk forever.
    static func equal(_ l: TemplateValue, _ r: TemplateValue) -> Bool {
        switch (l, r) {
        case (.undefined, .undefined): return true
        // Code point by code point, as Python: Swift's == holds "e\u{301}" and "é" equal.
        case (.string(let a), .string(let b)): return a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
        case (.list(let a), .list(let b)):
            guard a.count == b.count, RenderBudget.charge(a.count + 1) else { return false }
            return zip(a, b).allSatisfy { equal($0, $1) }
        case (.mapping(let a), .mapping(let b)):
            // A state object equals no dict, only a state object (Home Assistant compares TemplateStates by their state).
            guard a.count == b.count, (a.entity == nil) == (b.entity == nil), RenderBudget.charge(a.count + 1) else { return false }
            return a.allSatisfy { pair in b[pair.key].map { equal(pair.value, $0) } ?? false }
        case (.datetime(let a, let x), .datetime(let b, let y)):
            // Python: a naive datetime never equals an aware one.
            return a == b && (x == TemplateValue.naive) == (y == TemplateValue.naive)
        case (.int, .double), (.double, .int), (.int, .bool), (.bool, .int), (.double, .bool), (.bool, .double):
            return l.number == r.number
        default: return l == r
        }
    }

    /// Python refuses to compare or subtract a naive datetime and an aware one.
    private static func checkZones(_ x: Int, _ y: Int, _ what: String) throws(EvaluationError) {
        guard (x == TemplateValue.naive) == (y == TemplateValue.naive) else {
            throw EvaluationError("can't \(what) offset-naive and offset-aware datetimes")
        }
    }

    static func compare(_ l: TemplateValue, _ r: TemplateValue) throws(EvaluationError) -> Int {
        switch (l, r) {
        case (.string(let a), .string(let b)): return PythonText.compare(a, b)
        case (.datetime(let a, let x), .datetime(let b, let y)):
            try checkZones(x, y, "compare")
            return a < b ? -1 : (a == b ? 0 : 1)
        case (.timedelta(let a), .timedelta(let b)):
            return a < b ? -1 : (a == b ? 0 : 1)
        case (.date(let a), .date(let b)), (.time(let a), .time(let b)):
            return a < b ? -1 : (a == b ? 0 : 1)
        default:
            guard let a = l.number, let b = r.number else {
                throw EvaluationError("cannot compare \(l.typeName) \(l.repr) with \(r.typeName) \(r.repr)")
            }
            return a < b ? -1 : (a == b ? 0 : 1)
        }
    }

    private static func numeric(_ op: BinaryOperator, _ l: TemplateValue, _ r: TemplateValue) throws(EvaluationError) -> TemplateValue {
        if let dated = try CalendarValues.arithmetic(op, l, r) { return dated }
        switch (op, l, r) {
        case (.add, .string(let a), .string(let b)): return .string(try joined(a, b, "+"))
        case (.add, .list(let a), .list(let b)):
            try EvaluationLimits.checkLength(a.count + b.count, "adding lists")
            try RenderBudget.spendBuilding(a.count + b.count, "adding lists")
            return .list(a + b)
        // A datetime keeps its offset through arithmetic (Python recomputes a zone's offset for the new wall time:
        // the two differ only across a change of summer time).
        case (.add, .datetime(let t, let offset), .timedelta(let d)), (.add, .timedelta(let d), .datetime(let t, let offset)):
            return try .datetime(checked: t + d, offset: offset)
        case (.subtract, .datetime(let t, let offset), .timedelta(let d)): return try .datetime(checked: t - d, offset: offset)
        case (.subtract, .datetime(let a, let x), .datetime(let b, let y)):
            try checkZones(x, y, "subtract")
            return try .timedelta(checked: a - b)
        case (.add, .timedelta(let a), .timedelta(let b)): return try .timedelta(checked: a + b)
        case (.subtract, .timedelta(let a), .timedelta(let b)): return try .timedelta(checked: a - b)
        case (.multiply, .timedelta(let d), _):
            guard let n = r.number else { break }
            return try .timedelta(checked: d * n)
        case (.divide, .timedelta(let a), .timedelta(let b)):
            guard b != 0 else { throw EvaluationError("division by zero") }
            return .double(a / b)
        case (.divide, .timedelta(let d), _):
            guard let n = r.number else { break }
            guard n != 0 else { throw EvaluationError("division by zero") }
            return try .timedelta(checked: d / n)
        case (.multiply, .string(let s), .int(let n)), (.multiply, .int(let n), .string(let s)):
            return .string(try repeated(s, n))
        case (.multiply, .list(let items), .int(let n)), (.multiply, .int(let n), .list(let items)):
            // An empty list repeated any number of times is empty: not n empty copies (a huge n asked that of memory).
            guard !items.isEmpty, n > 0 else { return .list([]) }
            try EvaluationLimits.checkLength(items.count * Swift.max(0, Swift.min(n, EvaluationLimits.maximumTextLength + 1)), "repeating a list \(n) times")
            try RenderBudget.spendBuilding(items.count * Swift.max(0, Swift.min(n, EvaluationLimits.maximumTextLength + 1)), "repeating a list")
            return .list(Array(Array(repeating: items, count: Swift.max(0, n)).joined()))
        case (.modulo, .string(let format), _):
            return .string(try PythonFormat.percent(format, r))
        default: break
        }
        guard let a = l.number, let b = r.number, !l.isText, !r.isText else {
            throw EvaluationError("unsupported operand types for \(op.rawValue): \(l.typeName) \(l.repr) and \(r.typeName) \(r.repr)")
        }
        // Booleans are integers in Python (True + True == 2).
        let integers: (Int, Int)? = if let x = l.integer, let y = r.integer { (x, y) } else { nil }
        func exact(_ result: (partialValue: Int, overflow: Bool)) throws(EvaluationError) -> TemplateValue {
            guard !result.overflow else { throw EvaluationError.integerOverflow("\(l.repr) \(op.rawValue) \(r.repr)") }
            return .int(result.partialValue)
        }
        switch op {
        case .add:
            if let (x, y) = integers { return try exact(x.addingReportingOverflow(y)) }
            return .double(a + b)
        case .subtract:
            if let (x, y) = integers { return try exact(x.subtractingReportingOverflow(y)) }
            return .double(a - b)
        case .multiply:
            if let (x, y) = integers { return try exact(x.multipliedReportingOverflow(by: y)) }
            return .double(a * b)
        case .divide:
            guard b != 0 else { throw EvaluationError("division by zero") }
            return .double(a / b)
        case .floorDivide:
            guard b != 0 else { throw EvaluationError("division by zero") }
            if let (x, y) = integers { return try exact(floorDivision(x, y)) }
            // Python: inf // 1 is nan (floor of the quotient of an infinite dividend).
            guard a.isFinite else { return .double(.nan) }
            return .double((a / b).rounded(.down))
        case .modulo:
            guard b != 0 else { throw EvaluationError("division by zero") }
            if let (x, y) = integers { return .int(floorModulo(x, y)) }
            return .double(floatModulo(a, b))
        case .power:
            if let (x, y) = integers, y >= 0 { return try exact(integerPower(x, y)) }
            // Python: 0 ** -1 raises ZeroDivisionError.
            guard !(a == 0 && b < 0) else { throw EvaluationError("0.0 cannot be raised to a negative power") }
            return .double(Glibc.pow(a, b))
        default:
            throw EvaluationError("unsupported operator \(op.rawValue)")
        }
    }

    /// Python's `x // y` on integers: the quotient rounded toward negative infinity (only `min // -1` overflows).
    static func floorDivision(_ x: Int, _ y: Int) -> (partialValue: Int, overflow: Bool) {
        let (q, overflow) = x.dividedReportingOverflow(by: y)
        guard !overflow else { return (q, true) }
        return (x % y != 0 && (x < 0) != (y < 0)) ? (q - 1, false) : (q, false)
    }

    /// Python's `x % y` on integers: the remainder takes the divisor's sign. Never overflows (`min % -1` is 0).
    static func floorModulo(_ x: Int, _ y: Int) -> Int {
        let r = x.remainderReportingOverflow(dividingBy: y).partialValue
        return r != 0 && (r < 0) != (y < 0) ? r + y : r
    }

    /// Python's `x % y` on floats: the sign of the divisor, `nan` for an infinite dividend.
    static func floatModulo(_ a: Double, _ b: Double) -> Double {
        guard a.isFinite else { return .nan }
        if b.isInfinite { return a == 0 || (a < 0) == (b < 0) ? a : b }
        let r = a.truncatingRemainder(dividingBy: b)
        return r != 0 && (r < 0) != (b < 0) ? r + b : (r == 0 ? (b < 0 ? -0.0 : 0.0) : r)
    }

    /// `x ** y` for y ≥ 0 by squaring, reporting overflow instead of trapping.
    static func integerPower(_ base: Int, _ exponent: Int) -> (partialValue: Int, overflow: Bool) {
        var result = 1, factor = base, remaining = exponent
        while remaining > 0 {
            if remaining & 1 == 1 {
                let (r, o) = result.multipliedReportingOverflow(by: factor)
                if o { return (r, true) }
                result = r
            }
            remaining >>= 1
            if remaining > 0 {
                let (f, o) = factor.multipliedReportingOverflow(by: factor)
                // 0, 1 and -1 never overflow; a larger factor that does would overflow the result too.
                if o { return (f, true) }
                factor = f
            }
        }
        return (result, false)
    }

    /// `a ~ b`, `a + b`: refused before it is built when past `EvaluationLimits.maximumTextLength`; the copy is
    /// charged to the render, so building text in a loop cannot go quadratic unseen.
    static func joined(_ a: String, _ b: String, _ op: String) throws(EvaluationError) -> String {
        let length = a.utf8.count + b.utf8.count
        try EvaluationLimits.checkLength(length, "joining \(a.utf8.count) and \(b.utf8.count) bytes of text with \(op)")
        try RenderBudget.spendBuilding(length, "joining text with \(op)")
        return a + b
    }

    /// `text * n`: empty for n ≤ 0, bounded by `EvaluationLimits.maximumTextLength`.
    static func repeated(_ text: String, _ n: Int) throws(EvaluationError) -> String {
        guard n > 0, !text.isEmpty else { return "" }
        let (length, overflow) = text.count.multipliedReportingOverflow(by: n)
        try EvaluationLimits.checkLength(overflow ? .max : length, "repeating a \(text.count)-character text \(n) times")
        try RenderBudget.spendBuilding(length, "repeating text")
        return String(repeating: text, count: n)
    }
}
