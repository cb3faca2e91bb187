import Glibc
import FoundationEssentials

/// Python's operators over template values, including datetime and timedelta arithmetic.
enum Arithmetic {
    static func apply(_ op: BinaryOperator, _ l: TemplateValue, _ r: TemplateValue) throws(EvaluationError) -> TemplateValue {
        switch op {
        case .concat: return .string(l.text + r.text)
        case .equal: return .bool(equal(l, r))
        case .notEqual: return .bool(!equal(l, r))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
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
                found = s.contains(needle)
            case .list(let items): found = items.contains { equal($0, l) }
            case .mapping(let m):
                guard case .string(let key) = l else { throw EvaluationError("'in <mapping>' needs a string key") }
                found = m[key] != nil
            default: throw EvaluationError("cannot test membership in \(r.typeName)")
            }
            return .bool(op == .contains ? found : !found)
        default:
            return try numeric(op, l, r)
        }
    }

    static func equal(_ l: TemplateValue, _ r: TemplateValue) -> Bool {
        switch (l, r) {
        case (.int, .double), (.double, .int), (.int, .bool), (.bool, .int), (.double, .bool), (.bool, .double):
            return l.number == r.number
        default: return l == r
        }
    }

    static func compare(_ l: TemplateValue, _ r: TemplateValue) throws(EvaluationError) -> Int {
        switch (l, r) {
        case (.string(let a), .string(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.datetime(let a), .datetime(let b)), (.timedelta(let a), .timedelta(let b)):
            return a < b ? -1 : (a == b ? 0 : 1)
        default:
            guard let a = l.number, let b = r.number else {
                throw EvaluationError("cannot compare \(l.typeName) \(l.repr) with \(r.typeName) \(r.repr)")
            }
            return a < b ? -1 : (a == b ? 0 : 1)
        }
    }

    private static func numeric(_ op: BinaryOperator, _ l: TemplateValue, _ r: TemplateValue) throws(EvaluationError) -> TemplateValue {
        switch (op, l, r) {
        case (.add, .string(let a), .string(let b)): return .string(a + b)
        case (.add, .list(let a), .list(let b)): return .list(a + b)
        case (.add, .datetime(let t), .timedelta(let d)), (.add, .timedelta(let d), .datetime(let t)): return .datetime(t + d)
        case (.subtract, .datetime(let t), .timedelta(let d)): return .datetime(t - d)
        case (.subtract, .datetime(let a), .datetime(let b)): return .timedelta(a - b)
        case (.add, .timedelta(let a), .timedelta(let b)): return .timedelta(a + b)
        case (.subtract, .timedelta(let a), .timedelta(let b)): return .timedelta(a - b)
        case (.multiply, .timedelta(let d), _):
            guard let n = r.number else { break }
            return .timedelta(d * n)
        case (.divide, .timedelta(let a), .timedelta(let b)):
            guard b != 0 else { throw EvaluationError("division by zero") }
            return .double(a / b)
        case (.divide, .timedelta(let d), _):
            guard let n = r.number else { break }
            guard n != 0 else { throw EvaluationError("division by zero") }
            return .timedelta(d / n)
        case (.multiply, .string(let s), .int(let n)): return .string(String(repeating: s, count: max(0, n)))
        default: break
        }
        guard let a = l.number, let b = r.number, !isString(l), !isString(r) else {
            throw EvaluationError("unsupported operand types for \(op.rawValue): \(l.typeName) \(l.repr) and \(r.typeName) \(r.repr)")
        }
        let integers: (Int, Int)? = if case .int(let x) = l, case .int(let y) = r { (x, y) } else { nil }
        switch op {
        case .add:
            if let (x, y) = integers { let (s, o) = x.addingReportingOverflow(y); if !o { return .int(s) } }
            return .double(a + b)
        case .subtract:
            if let (x, y) = integers { let (s, o) = x.subtractingReportingOverflow(y); if !o { return .int(s) } }
            return .double(a - b)
        case .multiply:
            if let (x, y) = integers { let (s, o) = x.multipliedReportingOverflow(by: y); if !o { return .int(s) } }
            return .double(a * b)
        case .divide:
            guard b != 0 else { throw EvaluationError("division by zero") }
            return .double(a / b)
        case .floorDivide:
            guard b != 0 else { throw EvaluationError("division by zero") }
            if let (x, y) = integers { return .int(Int((Double(x) / Double(y)).rounded(.down))) }
            return .double((a / b).rounded(.down))
        case .modulo:
            guard b != 0 else { throw EvaluationError("division by zero") }
            if let (x, y) = integers { return .int(((x % y) + y) % y) }
            return .double(a - b * (a / b).rounded(.down))
        case .power:
            if let (x, y) = integers, y >= 0, y < 63 {
                var result = 1
                var overflow = false
                for _ in 0..<y where !overflow { (result, overflow) = result.multipliedReportingOverflow(by: x) }
                if !overflow { return .int(result) }
            }
            return .double(Glibc.pow(a, b))
        default:
            throw EvaluationError("unsupported operator \(op.rawValue)")
        }
    }

    private static func isString(_ v: TemplateValue) -> Bool {
        if case .string = v { return true }
        return false
    }
}
