import Foundation
import JSON
import Testing

@testable import Templates

/// The regular-expression filters against CPython's `re` (Golden/python-re.json, written by python-re-cases.py):
/// every pattern × text × filter gives what Python gives, and a pattern Python refuses is refused.
struct PythonReTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/python-re.json")

    @Test func everyCaseMatchesPython() throws {
        let json = try JSONParser.parse(Array(Data(contentsOf: Self.golden)))
        guard case .array(let cases)? = json["cases"] else { Issue.record("no cases"); return }
        #expect(cases.count > 5_000)
        var mismatches: [String] = []
        for case .array(let item) in cases {
            guard item.count == 4, case .string(let pattern) = item[0], case .string(let text) = item[1],
                  case .string(let function) = item[2] else { continue }
            let expected = item[3]
            let got: JSONValue
            do {
                switch function {
                case "regex_findall":
                    got = .array(try RegularExpressions.findAll(.string(text), .string(pattern), ignoreCase: false).map(\.json))
                case "regex_replace":
                    got = .string(try RegularExpressions.replace(.string(text), .string(pattern), with: .string("<\\g<0>>"), ignoreCase: false))
                case "regex_match":
                    got = .bool(try RegularExpressions.match(.string(text), .string(pattern), ignoreCase: false))
                default:
                    got = .bool(try RegularExpressions.search(.string(text), .string(pattern), ignoreCase: false))
                }
            } catch {
                got = .null
            }
            if got != expected { mismatches.append("\(function)(\(pattern.debugDescription), \(text.debugDescription)): Python \(expected.jsonText), LiveBridge \(got.jsonText)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) differ:\n\(mismatches.prefix(20).joined(separator: "\n"))")
    }
}
