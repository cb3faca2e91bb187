/// Runs a `PatternProgram` over one text, backtracking as Python's `re` does, within a budget of steps and of saved
/// states: a pattern that would backtrack catastrophically (`^(\w+\s?)*$` on `aaaa…a!`) gives up with an error
/// instead of holding the daemon. One matcher serves every search of one filter call, so `findall` and `sub`
/// share the budget.
struct PatternMatcher {
    /// Steps for one filter call: a scan of the longest text a template may hold takes a few hundred thousand.
    static let stepLimit = 2_000_000
    /// Saved states at once (each a few words): `.*` over 65,536 characters needs about that many.
    static let stackLimit = 400_000

    enum Frame {
        case branch(pc: Int, position: Int)
        case restore(register: Int, value: Int)
    }

    struct BudgetError: Error {
        let message: String
    }

    let program: PatternProgram
    let text: [Unicode.Scalar]
    private(set) var registers: [Int]
    private var stack: [Frame] = []
    private(set) var steps = 0

    init(_ program: PatternProgram, text: [Unicode.Scalar]) {
        self.program = program
        self.text = text
        registers = Array(repeating: -1, count: program.registerCount)
    }

    /// The first match starting at `from` or later (only at `from` when `anchored`), as group ranges; a match that
    /// is empty at `forbidEmptyAt` is skipped, as Python skips an empty match where the previous one ended.
    mutating func search(from: Int, anchored: Bool, forbidEmptyAt: Int? = nil) throws(BudgetError) -> [Range<Int>?]? {
        guard from <= text.count else { return nil }
        for start in from...(anchored ? from : text.count) {
            for r in registers.indices { registers[r] = -1 }
            registers[0] = start
            if try run(from: 0, at: start, forbidEmptyAt: forbidEmptyAt) != nil {
                return (0...program.groupCount).map { g in
                    let (a, b) = (registers[2 * g], registers[2 * g + 1])
                    return a >= 0 && b >= a ? a..<b : nil
                }
            }
        }
        return nil
    }

    /// Runs from `pc` at `position` until `.match` or `.succeed` (the end position) or every alternative failed (nil).
    private mutating func run(from startPC: Int, at position: Int, forbidEmptyAt: Int?) throws(BudgetError) -> Int? {
        let base = stack.count
        var pc = startPC
        var pos = position
        let instructions = program.instructions
        let n = text.count

        while true {
            steps += 1
            if steps > Self.stepLimit {
                throw BudgetError(message: "gave up after \(Self.stepLimit) steps on a \(n)-character text (catastrophic backtracking); simplify the pattern")
            }
            var ok = true
            switch instructions[pc] {
            case .scalar(let c):
                ok = pos < n && text[pos] == c
                if ok { pos += 1; pc += 1 }
            case .foldedScalar(let c):
                ok = pos < n && (text[pos] == c || PatternCase.fold(text[pos]) == c)
                if ok { pos += 1; pc += 1 }
            case .any(let dotAll):
                ok = pos < n && (dotAll || text[pos] != "\n")
                if ok { pos += 1; pc += 1 }
            case .set(let index):
                ok = pos < n && program.sets[index].contains(text[pos])
                if ok { pos += 1; pc += 1 }
            case .assertion(let kind):
                ok = holds(kind, at: pos)
                pc += 1
            case .save(let register):
                try set(register, pos)
                pc += 1
            case .jump(let target):
                pc = target
            case .split(let first, let second):
                try push(.branch(pc: second, position: pos))
                pc = first
            case .resetCount(let register):
                try set(register, 0)
                pc += 1
            case .repetition(let count, let min, let max, let greedy, let exit):
                let done = registers[count]
                if done < min {
                    pc += 1
                } else if let max, done >= max {
                    pc = exit
                } else if greedy {
                    try push(.branch(pc: exit, position: pos))
                    pc += 1
                } else {
                    try push(.branch(pc: pc + 1, position: pos))
                    pc = exit
                }
            case .markPass(let register):
                try set(register, pos)
                pc += 1
            case .endPass(let mark, let count, let min, let exit):
                if pos == registers[mark] && registers[count] >= min {
                    pc = exit
                } else {
                    try set(count, registers[count] + 1)
                    pc += 1
                }
            case .backreference(let group, let folded):
                let (a, b) = (registers[2 * group], registers[2 * group + 1])
                ok = a >= 0 && b >= a && pos + (b - a) <= n
                if ok {
                    for k in 0..<(b - a) {
                        let (x, y) = (text[a + k], text[pos + k])
                        if x != y, !(folded && PatternCase.fold(x) == PatternCase.fold(y)) { ok = false; break }
                    }
                }
                if ok { pos += b - a; pc += 1 }
            case .look(let start, let ahead, let negated, let width):
                steps += registers.count / 8  // its copy of the registers, a step per eight
                let from = ahead ? pos : pos - width
                let saved = registers
                var found = false
                if from >= 0 { found = try run(from: start, at: from, forbidEmptyAt: nil) != nil }
                if negated || !found {
                    registers = saved
                } else {
                    try keepChanges(from: saved)
                }
                ok = found != negated
                pc += 1
            case .atomic(let start):
                steps += registers.count / 8
                let saved = registers
                if let end = try run(from: start, at: pos, forbidEmptyAt: nil) {
                    try keepChanges(from: saved)
                    pos = end
                    pc += 1
                } else {
                    registers = saved
                    ok = false
                }
            case .succeed:
                stack.removeSubrange(base...)
                return pos
            case .match:
                if let forbidEmptyAt, pos == forbidEmptyAt, registers[0] == forbidEmptyAt {
                    ok = false
                } else {
                    stack.removeSubrange(base...)
                    return pos
                }
            }
            if ok { continue }
            // Backtrack to the latest alternative of this run, undoing the registers set since.
            var resumed = false
            while stack.count > base {
                switch stack.removeLast() {
                case .restore(let register, let value): registers[register] = value
                case .branch(let resumePC, let resumePosition):
                    pc = resumePC
                    pos = resumePosition
                    resumed = true
                }
                if resumed { break }
            }
            if !resumed { return nil }
        }
    }

    private func holds(_ kind: PatternAssertion, at pos: Int) -> Bool {
        let n = text.count
        switch kind {
        case .lineStart(let multiline): return pos == 0 || (multiline && text[pos - 1] == "\n")
        case .lineEnd(let multiline):
            return pos == n || (pos < n && text[pos] == "\n" && (multiline || pos == n - 1))
        case .textStart: return pos == 0
        case .textEnd: return pos == n
        case .wordBoundary(let negated, let ascii):
            let before = pos > 0 && ScalarClass.word.contains(text[pos - 1], ascii: ascii)
            let after = pos < n && ScalarClass.word.contains(text[pos], ascii: ascii)
            return (before != after) != negated
        }
    }

    private mutating func set(_ register: Int, _ value: Int) throws(BudgetError) {
        try push(.restore(register: register, value: registers[register]))
        registers[register] = value
    }

    /// After a sub-run that succeeded: what it set stays, undone if this run backtracks past it.
    private mutating func keepChanges(from saved: [Int]) throws(BudgetError) {
        for r in registers.indices where registers[r] != saved[r] {
            try push(.restore(register: r, value: saved[r]))
        }
    }

    private mutating func push(_ frame: Frame) throws(BudgetError) {
        guard stack.count < Self.stackLimit else {
            throw BudgetError(message: "gave up holding more than \(Self.stackLimit) backtracking states; simplify the pattern")
        }
        stack.append(frame)
    }
}
