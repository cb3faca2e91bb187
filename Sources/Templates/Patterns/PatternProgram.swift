/// A parsed pattern compiled into instructions for `PatternMatcher`, a backtracking machine like Python's own
/// (so it finds the same matches and groups) but one that counts its steps.
///
/// Registers hold, in order: each group's start and end (group 0 is the whole match), then each repetition's count
/// and the position where its current pass began (a pass that matched nothing ends the repetition, so `(a*)*`
/// cannot loop forever).
struct PatternProgram {
    enum Instruction {
        case scalar(Unicode.Scalar)
        case foldedScalar(Unicode.Scalar)
        case any(dotAll: Bool)
        case set(Int)
        case assertion(PatternAssertion)
        case save(register: Int)
        case jump(Int)
        /// Try `first`; on failure resume at `second` at the same position.
        case split(first: Int, second: Int)
        case resetCount(register: Int)
        /// The head of a repetition: go into the body or on to `exit`, by the count, the bounds and greediness.
        case repetition(count: Int, min: Int, max: Int?, greedy: Bool, exit: Int)
        case markPass(register: Int)
        /// The end of a pass: one that matched nothing past the minimum ends the repetition (keeping its groups, as
        /// Python's engine does); otherwise the count goes up.
        case endPass(mark: Int, count: Int, min: Int, exit: Int)
        case backreference(group: Int, folded: Bool)
        /// Runs the sub-program at `start` (up to its `.succeed`) without consuming; look-behind starts `width` back.
        case look(start: Int, ahead: Bool, negated: Bool, width: Int)
        /// Runs the sub-program at `start` and keeps its first match, never backtracking into it.
        case atomic(start: Int)
        case succeed
        case match
    }

    static let maximumInstructions = 50_000

    private(set) var instructions: [Instruction] = []
    private(set) var sets: [ScalarSet] = []
    let groupCount: Int
    let groupNames: [String: Int]
    private(set) var registerCount: Int

    init(_ source: String, ignoreCase: Bool) throws(PatternError) {
        var parser = PatternParser(source, ignoreCase: ignoreCase)
        let tree = try parser.parse()
        groupCount = parser.groupCount
        groupNames = parser.groupNames
        registerCount = 2 * (groupCount + 1)
        try emit(tree)
        instructions.append(.save(register: 1))
        instructions.append(.match)
    }

    private mutating func append(_ instruction: Instruction) throws(PatternError) {
        guard instructions.count < Self.maximumInstructions else {
            throw PatternError(message: "pattern too large (more than \(Self.maximumInstructions) instructions)", position: nil)
        }
        instructions.append(instruction)
    }

    private mutating func emit(_ node: PatternNode) throws(PatternError) {
        switch node {
        case .empty: break
        case .scalar(let c, let folded): try append(folded ? .foldedScalar(c) : .scalar(c))
        case .any(let dotAll): try append(.any(dotAll: dotAll))
        case .set(let set):
            sets.append(set)
            try append(.set(sets.count - 1))
        case .assertion(let kind): try append(.assertion(kind))
        case .group(let inner, let capture):
            if let capture { try append(.save(register: 2 * capture)) }
            try emit(inner)
            if let capture { try append(.save(register: 2 * capture + 1)) }
        case .sequence(let items):
            for item in items { try emit(item) }
        case .alternation(let branches):
            var jumpsToEnd: [Int] = []
            for (index, branch) in branches.enumerated() {
                if index < branches.count - 1 {
                    let split = instructions.count
                    try append(.split(first: split + 1, second: -1))
                    try emit(branch)
                    jumpsToEnd.append(instructions.count)
                    try append(.jump(-1))
                    instructions[split] = .split(first: split + 1, second: instructions.count)
                } else {
                    try emit(branch)
                }
            }
            for jump in jumpsToEnd { instructions[jump] = .jump(instructions.count) }
        case .repetition(let inner, let min, let max, let greedy, let possessive):
            if possessive {
                try emitSubprogram(.repetition(inner, min: min, max: max, greedy: greedy, possessive: false)) { start in .atomic(start: start) }
                return
            }
            let count = registerCount, mark = registerCount + 1
            registerCount += 2
            try append(.resetCount(register: count))
            let head = instructions.count
            try append(.repetition(count: count, min: min, max: max, greedy: greedy, exit: -1))
            try append(.markPass(register: mark))
            try emit(inner)
            let end = instructions.count
            try append(.endPass(mark: mark, count: count, min: min, exit: -1))
            try append(.jump(head))
            instructions[head] = .repetition(count: count, min: min, max: max, greedy: greedy, exit: instructions.count)
            instructions[end] = .endPass(mark: mark, count: count, min: min, exit: instructions.count)
        case .backreference(let group, let folded): try append(.backreference(group: group, folded: folded))
        case .look(let inner, let ahead, let negated):
            let width = inner.fixedWidth ?? 0
            try emitSubprogram(inner) { start in .look(start: start, ahead: ahead, negated: negated, width: width) }
        case .atomic(let inner):
            try emitSubprogram(inner) { start in .atomic(start: start) }
        }
    }

    /// `head`, a jump over the sub-program, then the sub-program ending in `.succeed`.
    private mutating func emitSubprogram(_ inner: PatternNode, _ head: (Int) -> Instruction) throws(PatternError) {
        let at = instructions.count
        try append(head(at + 2))
        try append(.jump(-1))
        try emit(inner)
        try append(.succeed)
        instructions[at + 1] = .jump(instructions.count)
    }
}
