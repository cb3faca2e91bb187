/// Jinja's filters that regroup a sequence: `batch`, `groupby`, `dictsort`, `reverse`, and Home Assistant's `flatten`.
///
/// Jinja's groups and pairs are tuples; here they are lists (printed `[…]` where Python prints `(…)`), and a group
/// answers `.grouper` and `.list` as Jinja's does.
enum Grouping {
    /// `batch(n, fill_with=None)`: lists of n items, the last filled up when `fill_with` is given.
    static func batch(_ items: [TemplateValue], _ args: [TemplateValue], _ keywords: [String: TemplateValue]) throws(EvaluationError) -> TemplateValue {
        guard let size = (args.first ?? keywords["linecount"])?.integer, size > 0 else {
            throw EvaluationError("batch needs a positive number of items per batch")
        }
        let fill = args.count > 1 ? args[1] : keywords["fill_with"]
        if fill != nil, !items.isEmpty, size > items.count {
            try EvaluationLimits.checkLength(size, "batch(\(size)) filled up")
        }
        var batches: [TemplateValue] = []
        var start = 0
        while start < items.count {
            let end = items.count - start <= size ? items.count : start + size
            var batch = Array(items[start..<end])
            if let fill, batch.count < size { batch += Array(repeating: fill, count: size - batch.count) }
            batches.append(.list(batch))
            start = end
        }
        return .list(batches)
    }

    /// `groupby('attribute', default=None, case_sensitive=False)`: groups sorted by their key, each `[key, items]`.
    static func groupBy(_ items: [TemplateValue], _ args: [TemplateValue], _ keywords: [String: TemplateValue]) throws(EvaluationError) -> TemplateValue {
        guard let attribute = (args.first ?? keywords["attribute"]) else { throw EvaluationError("groupby needs an attribute name") }
        let fallback = args.count > 1 ? args[1] : keywords["default"]
        let caseSensitive = (args.count > 2 ? args[2] : keywords["case_sensitive"])?.isTruthy ?? false
        var keyed: [(key: TemplateValue, sortKey: TemplateValue, item: TemplateValue)] = []
        for item in items {
            let key: TemplateValue
            if case .int(let i) = attribute, case .list(let fields) = item, fields.indices.contains(i) { key = fields[i] }
            else if let found = try Sequences.attribute(item, attribute.text) { key = found }
            else if let fallback { key = fallback }
            else { throw EvaluationError("groupby: \(item.typeName) \(item.repr) has no attribute \(attribute.repr)") }
            let sortKey: TemplateValue = if case .string(let s) = key, !caseSensitive { .string(s.lowercased()) } else { key }
            keyed.append((key, sortKey, item))
        }
        let sorted = try Sequences.stableSorted(keyed, by: \.sortKey)
        var groups: [TemplateValue] = []
        var index = 0
        while index < sorted.count {
            let first = sorted[index]
            var members: [TemplateValue] = []
            while index < sorted.count, Arithmetic.equal(sorted[index].sortKey, first.sortKey) {
                members.append(sorted[index].item)
                index += 1
            }
            groups.append(.list([first.key, .list(members)]))
        }
        return .list(groups)
    }

    /// `dictsort(case_sensitive=False, by='key', reverse=False)`: a mapping's pairs, sorted.
    static func dictSort(_ value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue]) throws(EvaluationError) -> TemplateValue {
        guard case .mapping(let members) = value else { throw EvaluationError("dictsort needs a mapping, got \(value.typeName)") }
        let caseSensitive = (args.first ?? keywords["case_sensitive"])?.isTruthy ?? false
        let byValue = (args.count > 1 ? args[1] : keywords["by"])?.text == "value"
        let reverse = (args.count > 2 ? args[2] : keywords["reverse"])?.isTruthy ?? false
        let pairs = members.keys.sorted().map { (key: $0, value: members[$0]!) }
        func sortKey(_ pair: (key: String, value: TemplateValue)) -> TemplateValue {
            let v: TemplateValue = byValue ? pair.value : .string(pair.key)
            if case .string(let s) = v, !caseSensitive { return .string(s.lowercased()) }
            return v
        }
        let sorted = try Sequences.stableSorted(pairs, by: sortKey, reverse: reverse)
        return .list(sorted.map { .list([.string($0.key), $0.value]) })
    }

    /// `reverse`: text backwards, a list in reverse order.
    static func reverse(_ value: TemplateValue) throws(EvaluationError) -> TemplateValue {
        switch value {
        case .string(let s): return .string(String(s.reversed()))
        case .list(let items): return .list(items.reversed())
        default: throw EvaluationError("reverse of \(value.typeName) \(value.repr): it is not a sequence")
        }
    }

    /// Home Assistant's `flatten(levels=None)`: nested lists made one.
    static func flatten(_ value: TemplateValue, levels: Int?) throws(EvaluationError) -> TemplateValue {
        guard case .list = value else { throw EvaluationError("flatten needs a list, got \(value.typeName)") }
        var out: [TemplateValue] = []
        // Depth first without recursion, counting what it makes: a list nested into itself forty times stops at the bound.
        var stack: [(items: [TemplateValue], index: Int, levels: Int?)] = [(value.listItems!, 0, levels)]
        while var top = stack.popLast() {
            guard top.index < top.items.count else { continue }
            let item = top.items[top.index]
            top.index += 1
            stack.append(top)
            // Every item walked, a list too: lists that share parts are walked once per path, within the budget.
            try RenderBudget.spend(1, "flatten")
            if case .list(let inner) = item, top.levels.map({ $0 > 0 }) ?? true {
                guard stack.count < 1_000 else { throw EvaluationError("flatten: lists nested more than 1000 deep") }
                stack.append((inner, 0, top.levels.map { $0 - 1 }))
            } else {
                out.append(item)
                try EvaluationLimits.checkLength(out.count, "flatten's items")
            }
        }
        return .list(out)
    }
}
