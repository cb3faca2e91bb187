import Glibc
/// A small parser for `--flag value`, `--flag=value`, `--switch` and positional arguments.
struct ArgumentList {
    private(set) var options: [String: String] = [:]
    /// Every value of the options that may repeat, in order.
    private(set) var repeated: [String: [String]] = [:]
    private(set) var switches: Set<String> = []
    private(set) var positional: [String] = []

    /// `valued` names the options that take a value; `flags` the switches; `repeating` the valued options that may be
    /// given more than once (`--input a=1 --input b=2`). Anything else is an error.
    init(_ arguments: [String], valued: Set<String>, flags: Set<String> = [], repeating: Set<String> = []) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                positional += arguments[index...]
                break
            }
            guard argument.hasPrefix("--") else {
                // "-x" is a mistaken option, not a file named "-x" ("-" alone and "-5" are values).
                if argument.count > 1, argument.hasPrefix("-"), !(argument.dropFirst().first?.isNumber ?? false) {
                    throw UsageError("unknown option \(argument)")
                }
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if flags.contains(name) {
                guard value == nil else { throw UsageError("--\(name) takes no value") }
                switches.insert(name)
            } else if valued.contains(name) {
                if value == nil {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                if options[name] != nil, !repeating.contains(name) { throw UsageError("--\(name) is given twice") }
                options[name] = value
                if let value { repeated[name, default: []].append(value) }
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    subscript(option: String) -> String? { options[option] }
    /// Every value given for a repeating option, in order.
    func all(_ option: String) -> [String] { repeated[option] ?? [] }
    func has(_ flag: String) -> Bool { switches.contains(flag) }
}
