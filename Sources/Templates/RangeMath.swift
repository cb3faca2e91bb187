/// Home Assistant's `clamp`, `wrap` and `remap` (its math extension, 2025): a value kept in, wrapped into, or mapped
/// from one range onto another, as floats.
enum RangeMath {
    static func numbers(_ values: [TemplateValue]) throws(EvaluationError) -> [Double] {
        var out: [Double] = []
        for value in values {
            guard let n = Conversions.float(value) else {
                throw EvaluationError("function requires numeric arguments, got " + values.map(\.repr).joined(separator: ", "))
            }
            out.append(n)
        }
        return out
    }

    static func clamp(_ args: [TemplateValue]) throws(EvaluationError) -> TemplateValue {
        guard args.count == 3 else { throw EvaluationError("clamp takes a value, a minimum and a maximum") }
        let n = try numbers(args)
        return .double(Swift.max(n[1], Swift.min(n[2], n[0])))
    }

    static func wrap(_ args: [TemplateValue]) throws(EvaluationError) -> TemplateValue {
        guard args.count == 3 else { throw EvaluationError("wrap takes a value, a minimum and a maximum") }
        let n = try numbers(args)
        let size = n[2] - n[1]
        guard size != 0 else { return .double(n[1]) }
        let result = Arithmetic.floatModulo(n[0] - n[1], size) + n[1]
        return .double(size > 0 && result >= n[2] ? n[1] : result)
    }

    /// remap(value, in_min, in_max, out_min, out_max, steps=0, edges='none'|'clamp'|'wrap'|'mirror').
    static func remap(_ args: [TemplateValue], _ keywords: [String: TemplateValue]) throws(EvaluationError) -> TemplateValue {
        guard args.count == 5 else { throw EvaluationError("remap takes a value, in_min, in_max, out_min and out_max") }
        let n = try numbers(args)
        var value = n[0]
        let (inMin, inMax, outMin, outMax) = (n[1], n[2], n[3], n[4])
        let edges = keywords["edges"]?.text ?? "none"
        switch edges {
        case "clamp": value = Swift.max(inMin, Swift.min(inMax, value))
        case "wrap", "mirror":
            guard inMin != inMax else { throw EvaluationError("in_min=\(TemplateValue.pythonFloat(inMin)) must not equal in_max=\(TemplateValue.pythonFloat(inMax))") }
            let size = inMax - inMin
            if edges == "wrap" {
                value = Arithmetic.floatModulo(value - inMin, size) + inMin
            } else {
                let offset = value - inMin
                let period = (offset / size).rounded(.down)
                var position = offset - period * size
                if Arithmetic.floatModulo(period, 2) != 0 { position = size - position }
                value = inMin + position
            }
        default: break
        }
        let steps = Swift.max(keywords["steps"].flatMap { Conversions.float($0) } ?? 0, 0)
        if steps == 0, inMin == outMin, inMax == outMax { return .double(value) }
        guard inMax != inMin else { throw EvaluationError("float division by zero") }
        var normalized = (value - inMin) / (inMax - inMin)
        if steps > 0 { normalized = (normalized * steps).rounded(.toNearestOrEven) / steps }
        let result = outMin + normalized * (outMax - outMin)
        if edges == "clamp" { return .double(Swift.max(Swift.min(outMin, outMax), Swift.min(Swift.max(outMin, outMax), result))) }
        return .double(result)
    }
}
