import Foundation
import Testing

/// DEVELOPERS.md's module graph says what each library module imports from the package; it is held to Package.swift.
struct ModuleGraphTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let cLibraries = ["CLibWebSockets": "libwebsockets", "CCurl": "libcurl", "CYAML": "libyaml"]

    /// `name → sorted dependencies` of the `.target(…)` entries in Package.swift (C modules by library name).
    static func packageGraph() throws -> [String: [String]] {
        let text = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var graph: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.contains(".target(name: \"") {
            let name = line.split(separator: "\"")[1]
            var dependencies: [String] = []
            if let open = line.range(of: "dependencies: ["), let close = line[open.upperBound...].firstIndex(of: "]") {
                dependencies = line[open.upperBound..<close].split(separator: ",").map {
                    let module = $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    return cLibraries[module] ?? module
                }
            }
            graph[String(name)] = dependencies.sorted()
        }
        return graph
    }

    /// The same from DEVELOPERS.md's list: "- `Name` — A, B [clib]".
    static func documentedGraph() throws -> [String: [String]] {
        let text = try String(contentsOf: root.appendingPathComponent("DEVELOPERS.md"), encoding: .utf8)
        guard let start = text.range(of: "<!-- module-graph -->"), let end = text.range(of: "<!-- end module-graph -->") else { return [:] }
        var graph: [String: [String]] = [:]
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("- `") {
            let name = line.split(separator: "`")[1]
            let rest = line.components(separatedBy: "—").last ?? ""
            let words = rest.replacingOccurrences(of: "[", with: ",").replacingOccurrences(of: "]", with: "").split(separator: ",")
            graph[String(name)] = words.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.sorted()
        }
        return graph
    }

    @Test func developersMdListsEveryLibraryModuleWithItsDependencies() throws {
        let package = try Self.packageGraph()
        let documented = try Self.documentedGraph()
        let flow = ["Platform", "JSON", "WebSocketTransport", "HTTPClient", "HomeAssistant", "LiveActivity", "Preview", "Templates", "Rules", "Dispatcher", "LiveBridge"]
        #expect(documented.keys.sorted() == flow.sorted())
        for module in flow {
            #expect(documented[module] == package[module], "\(module): DEVELOPERS.md says \(documented[module] ?? []), Package.swift \(package[module] ?? [])")
        }
        // The dispatcher knows nothing of rules files; the payload vocabulary needs nothing of Home Assistant's protocol.
        #expect(package["Dispatcher"]?.contains("Rules") == false)
        #expect(package["LiveActivity"]?.contains("HomeAssistant") == false)
        #expect(package["Preview"]?.contains("HomeAssistant") == false)
    }

    /// Every package module a target's files import is one it declares in Package.swift (a transitive dependency
    /// builds by luck of the graph, and hides the edge from DEVELOPERS.md's picture).
    @Test func everyTargetDeclaresWhatItsFilesImport() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var declared: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") {
            guard let kind = ["target(name: \"", "executableTarget(name: \"", "testTarget(name: \""].first(where: { line.contains($0) }),
                  let nameStart = line.range(of: kind) else { continue }
            let name = String(line[nameStart.upperBound...].prefix { $0 != "\"" })
            var dependencies: Set<String> = []
            if let open = line.range(of: "dependencies: ["), let close = line[open.upperBound...].firstIndex(of: "]") {
                dependencies = Set(line[open.upperBound..<close].split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                })
            }
            declared[name] = dependencies
        }
        #expect(declared.count > 20, "Package.swift's targets were not read")
        var undeclared: [String] = []
        for (target, dependencies) in declared {
            let folder = ["Sources", "Tests"].map { Self.root.appendingPathComponent($0).appendingPathComponent(target) }
                .first { FileManager.default.fileExists(atPath: $0.path) }
            guard let folder, let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for line in source.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    guard let at = words.firstIndex(of: "import"), at <= 1, at + 1 < words.count else { continue }
                    let module = String(words[at + 1])
                    if declared[module] != nil || Self.cLibraries[module] != nil, !dependencies.contains(module) {
                        undeclared.append("\(target)/\(file) imports \(module)")
                    }
                }
            }
        }
        #expect(undeclared.isEmpty, "declare these in Package.swift: \(undeclared.sorted())")
    }

    /// The daemon's modules import FoundationEssentials, never the whole of Foundation: statically linked, Foundation
    /// brings its internationalisation and ICU's data, tripling the binary (81 MB instead of 32 MB, measured).
    @Test func theDaemonsModulesImportFoundationEssentialsOnly() throws {
        let exempt: Set<String> = ["LiveBridgeBenchmark", "RulesBenchmark", "ProcessMeasurement"]  // tools that measure, not shipped
        let sources = Self.root.appendingPathComponent("Sources")
        var offenders: [String] = []
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) where !exempt.contains(module) {
            guard let files = FileManager.default.enumerator(atPath: sources.appendingPathComponent(module).path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: sources.appendingPathComponent(module).appendingPathComponent(file), encoding: .utf8)
                if text.split(separator: "\n").contains("import Foundation") { offenders.append(module + "/" + file) }
            }
        }
        #expect(offenders.isEmpty, "import FoundationEssentials instead: \(offenders.sorted())")
    }
}
