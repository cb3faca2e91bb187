/// "did you mean": the closest word within two edits.
public enum Suggestion {
    /// ` (did you mean "word"?)` with the closest option, or `otherwise` when none is close: the tail of every
    /// message about a name that is not one of the known ones.
    public static func didYouMean(_ word: String, in options: [String], otherwise: String = "") -> String {
        closest(to: word, in: options).map { " (did you mean \"\($0)\"?)" } ?? otherwise
    }

    public static func closest(to word: String, in options: [String]) -> String? {
        let lower = word.lowercased()
        let scored = options.map { ($0, distance(lower, $0.lowercased())) }.filter { $0.1 <= max(1, min(2, word.count / 3)) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Edits between two words, a swap of neighbours counting as one (optimal string alignment).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}
