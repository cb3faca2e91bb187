import FoundationEssentials
import Glibc
import JSON
import Rules
import Templates

/// `livebridge template --states STATES.json [--at ISO_TIME] [TEMPLATE]`: renders templates as Developer Tools →
/// Template does, to text. With no TEMPLATE, reads JSON lines `{"id": …, "template": …}` from stdin and writes
/// `{"id": …, "result": …}` or `{"id": …, "error": …}` per line: the differential suite's side of the comparison.
enum TemplateCommand {
    static let help = """
        usage: livebridge template --states STATES.json [--at ISO_TIME] [--url URL [--token-file FILE]] [TEMPLATE]

        Renders TEMPLATE against the states (shaped like GET /api/states) and prints the text, as Home Assistant's
        Developer Tools → Template shows it. Without TEMPLATE, reads JSON lines {"id": …, "template": …} from stdin and
        answers each with {"id": …, "result": …} or {"id": …, "error": …}. --at sets now() (default: the current time).
        Templates only Home Assistant can render (area_name, device_attr…) give no text offline; with --url (and
        --token-file or $LIVEBRIDGE_HA_TOKEN) Home Assistant at URL renders them, on its own states.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["states", "at", "url", "token-file"])
        guard let statesPath = args["states"] else { throw UsageError("--states STATES.json is required") }
        guard args.positional.count <= 1 else { throw UsageError("give one template, or none to read them from stdin") }
        let (states, order) = try StatesFile.loadInOrder(path: statesPath)
        var context = EvaluationContext(states: states, order: order, now: try CommandSupport.time(args))
        // All requests are read first, so those only Home Assistant can render are asked for together.
        var lines: [String] = []
        if args.positional.isEmpty { while let line = readLine(strippingNewline: true) { if !line.isEmpty { lines.append(line) } } }
        if args["url"] != nil, let target = try HomeAssistantTarget.from(args) {
            let sources = args.positional + lines.compactMap { (try? JSONParser.parse($0))?["template"]?.stringValue }
            let remote = sources.filter { (try? Template($0))?.renderedByHomeAssistant != nil }
            context.renderedByHomeAssistant = try await HomeAssistantRendering.fetch(Array(Set(remote)).sorted(), from: target, command: "template")
        }
        if let source = args.positional.first {
            switch render(source, in: context) {
            case .success(let text):
                print(text)
                return 0
            case .failure(let problem):
                standardError("livebridge template: \(problem)")
                return 1
            }
        }
        for line in lines {
            var answer: [String: JSONValue] = [:]
            do {
                let request = try JSONParser.parse(line)
                answer["id"] = request["id"] ?? .null
                guard let source = request["template"]?.stringValue else { throw UsageError("a line without \"template\"") }
                switch render(source, in: context) {
                case .success(let text): answer["result"] = .string(text)
                case .failure(let problem): answer["error"] = .string(problem.description)
                }
            } catch {
                answer["error"] = .string("not a request: \(error)")
            }
            standardOutput(JSONValue.object(answer).jsonText + "\n")
        }
        return 0
    }

    /// Why a template gives no text: refused at load (a compile error) or failed when evaluated.
    struct RefusalError: Error, CustomStringConvertible {
        let description: String
    }

    /// The text a template renders to, or why it cannot.
    static func render(_ source: String, in context: EvaluationContext) -> Result<String, RefusalError> {
        // As Home Assistant renders it: a name nothing defines is undefined (nothing), said on standard error.
        let template: Template
        do throws(Template.CompileError) {
            let (compiled, undefined) = try Template.leniently(source)
            template = compiled
            for name in undefined { standardError("livebridge template: note: \(name) is not defined: it renders as nothing, as in Home Assistant") }
        } catch {
            return .failure(RefusalError(description: "refused: \(error.message)"))
        }
        do throws(EvaluationError) { return .success(try template.evaluate(in: context, variables: [:]).text) } catch {
            return .failure(RefusalError(description: "failed: \(error.message)"))
        }
    }
}
