import ProcessMeasurement
import FakePushServices
import Foundation
import HTTPClient
import HomeAssistantSimulator
import JSON
import Rules
import Testing
import WebSocketTransport

/// The Home Assistant add-on repository: laid out and written as Supervisor reads it (the checks ported from its
/// validation code in SupervisorAddonRules), and the add-on's entry point run as Supervisor runs it, outside a container.
@Suite(.timeLimit(.minutes(1)))
struct AddonRepositoryTests {
    static let repository = CommandLineTests.repository
    static let addon = repository.appendingPathComponent("config/homeassistant-addon")

    func yaml(_ path: String) throws -> YAMLNode {
        var loader = YAMLLoader(environment: [:])
        let (node, errors) = loader.load(file: path)
        try #require(errors.isEmpty, "\(errors)")
        return try #require(node)
    }

    func addonFile(_ name: String) -> String { Self.addon.appendingPathComponent(name).path }

    /// Supervisor finds add-ons as `**/config.{json,yaml,yml}` outside dot folders and `rootfs`, and the repository's
    /// description as the first `**/repository.*`: exactly one of each here, or it would offer a broken add-on.
    @Test func supervisorFindsOneAddonAndTheRepositoryDescription() throws {
        var configs: [String] = [], repositories: [String] = []
        let root = Self.repository.path
        let walker = try #require(FileManager.default.enumerator(atPath: root))
        while let relative = walker.nextObject() as? String {
            let parts = relative.split(separator: "/")
            if parts.contains(where: { $0.hasPrefix(".") || $0 == "rootfs" }) { walker.skipDescendants(); continue }
            let name = (relative as NSString).lastPathComponent
            let suffix = (name as NSString).pathExtension
            guard ["json", "yaml", "yml"].contains(suffix) else { continue }
            if name.hasPrefix("config.") { configs.append(relative) }
            if name.hasPrefix("repository.") { repositories.append(relative) }
        }
        #expect(configs == ["config/homeassistant-addon/config.yaml"])
        #expect(repositories == ["repository.yaml"])
    }

    @Test func theManifestsPassSupervisorsChecks() throws {
        let config = try yaml(addonFile("config.yaml"))
        #expect(SupervisorAddonRules.config(config) == [])
        #expect(SupervisorAddonRules.build(try yaml(addonFile("build.yaml"))) == [])
        #expect(SupervisorAddonRules.repository(try yaml(Self.repository.appendingPathComponent("repository.yaml").path)) == [])
        let schema = try #require(SupervisorAddonRules.mapping(config)?["schema"])
        let schemaKeys = Set(try #require(SupervisorAddonRules.mapping(schema)).keys)
        #expect(SupervisorAddonRules.translations(try yaml(addonFile("translations/en.yaml")), schemaKeys: schemaKeys) == [])
    }

    /// What the issue asks of the manifest, beyond what Supervisor requires.
    @Test func theManifestAsksForWhatLiveBridgeNeeds() async throws {
        let config = try #require(SupervisorAddonRules.mapping(try yaml(addonFile("config.yaml"))))
        #expect(config["homeassistant_api"]?.scalar == "true", "Core through the Supervisor with SUPERVISOR_TOKEN")
        #expect(config["init"]?.scalar == "false")
        #expect(config["ingress"]?.scalar == "true" && config["ingress_port"]?.scalar == "8099")
        #expect(config["watchdog"]?.scalar == "http://[HOST]:[PORT:8099]/healthz")
        #expect(config["arch"].flatMap(SupervisorAddonRules.sequence)?.compactMap(\.scalar) == ["amd64", "aarch64"])
        let map = try #require(config["map"].flatMap(SupervisorAddonRules.sequence)?.first.flatMap(SupervisorAddonRules.mapping))
        #expect(map["type"]?.scalar == "addon_config" && map["read_only"]?.scalar == "false")
        let output = try Subprocess(["--version"])
        #expect(await output.exitStatus() == 0)
        #expect(output.stdout.lines == ["livebridge \(config["version"]?.scalar ?? "?")"], "the add-on's version is the binary's")
    }

    @Test func theAddonFolderHoldsWhatTheStoreShows() throws {
        for name in ["Dockerfile", "build.yaml", "DOCS.md", "CHANGELOG.md", "run.sh", "translations/en.yaml"] {
            #expect(FileManager.default.fileExists(atPath: addonFile(name)), "\(name)")
        }
        #expect(FileManager.default.isExecutableFile(atPath: addonFile("run.sh")))
        for (name, size) in [("icon.png", (128, 128)), ("logo.png", (250, 100))] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: addonFile(name))))
            #expect(bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "\(name) is a PNG")
            let width = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }, height = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
            #expect(width == size.0 && height == size.1, "\(name) is \(width)×\(height)")
        }
        let changelog = try String(contentsOfFile: addonFile("CHANGELOG.md"), encoding: .utf8)
        let version = try #require(SupervisorAddonRules.mapping(try yaml(addonFile("config.yaml")))?["version"]?.scalar)
        #expect(changelog.contains("## \(version)"), "the changelog has the version the store offers")
    }

    /// The image: Home Assistant's base for the arch as the last stage, only the three libraries' runtime packages on
    /// it, run.sh as the command.
    @Test func theDockerfileBuildsOnHomeAssistantsBase() throws {
        let dockerfile = try String(contentsOfFile: addonFile("Dockerfile"), encoding: .utf8)
        let lines = dockerfile.split(separator: "\n").map(String.init)
        #expect(lines.contains("ARG BUILD_FROM=ghcr.io/home-assistant/amd64-base-debian:bookworm"))
        let stages = lines.filter { $0.hasPrefix("FROM ") }
        #expect(stages.last == "FROM ${BUILD_FROM}")
        let runtime = lines.drop(while: { $0 != "FROM ${BUILD_FROM}" })
        let install = try #require(runtime.first { $0.contains("apt-get install") })
        let packages = install.split(separator: " ").filter { !$0.hasPrefix("-") && $0 != "\\" }.drop(while: { $0 != "install" }).dropFirst()
        #expect(Set(packages.map(String.init)) == ["libwebsockets17", "libcurl4", "libyaml-0-2", "ca-certificates", "tzdata"])
        #expect(runtime.contains("COPY run.sh /run.sh") && runtime.contains(#"CMD ["/run.sh"]"#))
        #expect(stages.count == 1, "one stage: the binary comes built, in the context")
    }

    /// Prebuilt images: config.yaml names one per architecture, the workflow builds the binary and the image for each
    /// architecture config.yaml lists and publishes them to that name on a version tag; nothing in the add-on's folder
    /// fetches or compiles source (no placeholder URL), the Dockerfile takes the binary from its context.
    @Test func theAddonIsPrebuiltPerArchitectureAndNamesItsImage() throws {
        let config = try #require(SupervisorAddonRules.mapping(try yaml(addonFile("config.yaml"))))
        let image = try #require(config["image"]?.scalar)
        #expect(image == "ghcr.io/livebridge/{arch}-addon-livebridge")
        let workflow = try String(contentsOfFile: Self.repository.appendingPathComponent(".github/workflows/addon-images.yaml").path, encoding: .utf8)
        let architectures = config["arch"].flatMap(SupervisorAddonRules.sequence)?.compactMap(\.scalar) ?? []
        #expect(workflow.contains("ARCHITECTURES: '[" + architectures.map { "\"\($0)\"" }.joined(separator: ", ") + "]'"), "the workflow builds every arch")
        #expect(workflow.contains("IMAGE_NAME: addon-livebridge") && image.hasSuffix("/{arch}-addon-livebridge"), "the name config.yaml pulls")
        #expect(workflow.contains("tags: [\"v*\"]") && workflow.contains("home-assistant/builder/actions/build-image@")
                && !workflow.contains("home-assistant/builder@"), "Home Assistant's current builder actions, not the deprecated one")
        #expect(workflow.contains("context: config/homeassistant-addon") && workflow.contains("install -m 755 .build/release/livebridge config/homeassistant-addon/livebridge"))
        #expect(workflow.contains("BUILD_FROM=ghcr.io/home-assistant/${{ matrix.arch }}-base-debian:bookworm"))
        let dockerfile = try String(contentsOfFile: addonFile("Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("COPY livebridge /usr/local/bin/livebridge"))
        for file in ["Dockerfile", "build.yaml", "config.yaml", "run.sh", "DOCS.md"] {
            let text = try String(contentsOfFile: addonFile(file), encoding: .utf8)
            #expect(!text.contains("archive/refs") && !text.contains("make release") && !text.contains("swift:"), "\(file) fetches or builds no source")
        }
    }

    /// The checks catch what Supervisor would refuse: each broken manifest gives the problem named.
    @Test(arguments: [
        ("slug: livebridge", "slug: Live Bridge!", "slug: must match"),
        ("version: \"0.1.0\"\n", "", "required key version is missing"),
        ("watchdog: http://[HOST]:[PORT:8099]/healthz", "watchdog: http://localhost:8099/healthz", "watchdog: must look like"),
        ("  - type: addon_config", "  - type: addon_configs", "map.type: \"addon_configs\" is not one of"),
        ("  log_level: list(debug|info|warning|error)", "  log_level: choice(debug|info)", "schema.log_level: unknown type"),
        ("  dry_run: false", "  dry_run: maybe", "options.dry_run: must be true or false"),
        ("  rules: /config/livebridge.yaml", "  rules: /share/livebridge.yaml", "options.rules: \"/share/livebridge.yaml\" does not match"),
        ("  log_level: info", "  log_level: verbose", "options.log_level: \"verbose\" is not one of"),
        ("ingress_port: 8099", "ingress_port: 70000", "ingress_port: must be a port"),
        ("  - aarch64", "  - riscv64", "arch: \"riscv64\" is not one of"),
        ("init: false", "init: sometimes", "init: must be a boolean"),
        ("startup: application", "startup: whenever", "startup: \"whenever\" is not one of"),
    ])
    func aBrokenManifestIsCaught(original: String, replacement: String, problem: String) throws {
        let text = try String(contentsOfFile: addonFile("config.yaml"), encoding: .utf8)
        #expect(text.contains(original), "the fixture still has \(original)")
        var loader = YAMLLoader(environment: [:])
        let node = try #require(loader.load(text: text.replacingOccurrences(of: original, with: replacement), file: "config.yaml").0)
        let problems = SupervisorAddonRules.config(node)
        #expect(problems.contains { $0.contains(problem) }, "\(problems)")
        #expect(problems.allSatisfy { $0.hasPrefix("config.yaml:") }, "each says where")
    }

    @Test func brokenBuildTranslationAndRepositoryFilesAreCaught() throws {
        var loader = YAMLLoader(environment: [:])
        func node(_ text: String) throws -> YAMLNode { try #require(loader.load(text: text, file: "f.yaml").0) }
        #expect(SupervisorAddonRules.build(try node("build_from:\n  amd64: 'not an image'\n  sparc: a/b:1\n")).count == 2)
        #expect(SupervisorAddonRules.translations(try node("configuration:\n  rulez:\n    name: Rules\n"), schemaKeys: ["rules"])
            == ["f.yaml:3:5: configuration.rulez is not an option of the schema"])
        #expect(SupervisorAddonRules.repository(try node("url: https://example.com\n")) == ["f.yaml:1:1: required key name is missing"])
    }

    /// The add-on's entry point as Supervisor starts it, outside a container: options in DATA/options.json naming a
    /// rules file with no Home Assistant in it, SUPERVISOR_TOKEN set, and the simulator standing in for
    /// supervisor/core/websocket. The daemon connects with the add-on's token, serves the ingress page and pushes.
    @Test func theEntryPointRunsTheDaemonAsSupervisorStartsIt() async throws {
        let supervisorToken = "supervisor-token-5f1e"
        let simulator = try HomeAssistantSimulator(token: supervisorToken)
        defer { simulator.stop() }
        let service = try FakePushService()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-addon-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/config", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try ContainerImage.washerRules(service: service).write(toFile: folder + "/config/livebridge.yaml", atomically: true, encoding: .utf8)
        try #"{"rules": "\#(folder)/config/livebridge.yaml", "log_level": "debug", "dry_run": false}"#
            .write(toFile: folder + "/data/options.json", atomically: true, encoding: .utf8)
        await simulator.setState("sensor.washer_status", "idle")
        await simulator.setState("sensor.washer_progress", "10")
        let addon = try Subprocess([], environment: [
            "SUPERVISOR_TOKEN": supervisorToken, "LIVEBRIDGE": try Subprocess.livebridge.path, "LIVEBRIDGE_DATA": folder + "/data",
            "LIVEBRIDGE_STATUS_LISTEN": "127.0.0.1:0", "LIVEBRIDGE_SUPERVISOR_HOST": "127.0.0.1:\(simulator.port)",
        ], program: addonFile("run.sh"))
        let port = try #require(await statusPort(of: addon), "\(addon.stderr.lines.joined(separator: "\n"))")
        #expect(await addon.stderr.wait { $0.contains { $0.contains("msg=\"ready: 2 entities in the snapshot\"") } })
        #expect(addon.stderr.lines.contains { $0.contains("through the Supervisor") && $0.contains("url=ws://127.0.0.1:\(simulator.port)/core/websocket") })
        await simulator.setState("sensor.washer_status", "running")
        #expect(await service.wait { $0.count == 1 })
        #expect(await addon.stderr.wait { $0.contains { $0.contains("level=debug") && $0.contains("msg=queued") } }, "log_level from the options")
        #expect(service.requests.first?.body?["state"] == "ONGOING")
        let client = HTTPClient()
        let health = try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz"))
        #expect(health.status == 200)
        let healthcheck = try Subprocess(["healthcheck", "--url", "http://127.0.0.1:\(port)/healthz"])
        #expect(await healthcheck.exitStatus() == 0)
        #expect(healthcheck.stdout.lines.first?.hasPrefix("200 {") == true)
        let page = try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/"))
        #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("fetch('api/state')"))
        let state = try JSONParser.parse(try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/api/state")).body)
        #expect(state["activities"]?["washer · aivi"]?["phase"] == "running")
        guard case .array(let log)? = state["log"] else { Issue.record("no push log"); return }
        #expect(log.first?["decision"] == "start delivered (200)")
        #expect(!addon.stderr.lines.joined().contains(supervisorToken), "the token never appears in the log")
        addon.signal(SIGTERM)
        #expect(await addon.exitStatus() == 0)
    }

    /// First start: no rules file in the add-on's folder. The entry point writes suggest's proposal there (through
    /// the Supervisor), with secrets.yaml beside it, and does not run it: its placeholder Aivi token must never reach
    /// the real service. The user reads it, deletes its first line, and restarts.
    @Test func theFirstStartWritesAProposalAndWaitsForTheUser() async throws {
        let supervisorToken = "supervisor-token-90ab"
        let simulator = try HomeAssistantSimulator(token: supervisorToken)
        defer { simulator.stop() }
        let household = HouseholdScript(simulator: simulator, cycle: 0.05)
        await household.placeInRegistries()
        await household.runCycle()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-addon-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/config", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try #"{"rules": "\#(folder)/config/livebridge.yaml", "log_level": "info", "dry_run": true}"#
            .write(toFile: folder + "/data/options.json", atomically: true, encoding: .utf8)
        let addon = try Subprocess([], environment: [
            "SUPERVISOR_TOKEN": supervisorToken, "LIVEBRIDGE": try Subprocess.livebridge.path, "LIVEBRIDGE_DATA": folder + "/data",
            "LIVEBRIDGE_STATUS_LISTEN": "127.0.0.1:0", "LIVEBRIDGE_SUPERVISOR_HOST": "127.0.0.1:\(simulator.port)",
        ], program: addonFile("run.sh"))
        #expect(await addon.exitStatus() == 1)
        let rules = try String(contentsOfFile: folder + "/config/livebridge.yaml", encoding: .utf8)
        #expect(rules.hasPrefix("# LIVEBRIDGE PROPOSAL: "))
        #expect(rules.contains("  washer:\n") && rules.contains("  laundry:\n") && !rules.contains("homeassistant:"))
        #expect(try String(contentsOfFile: folder + "/config/secrets.yaml", encoding: .utf8).contains("aivi_token:"))
        #expect(addon.stderr.lines.contains { $0.hasPrefix("livebridge suggest: wrote \(folder)/config/livebridge.yaml: OK — 4 activities") })
        #expect(addon.stderr.lines.contains { $0.contains("livebridge.yaml:1:1: this is livebridge suggest's proposal, not yet read") })
        #expect(!addon.stderr.lines.contains { $0.contains("ready:") }, "the proposal was run")
    }

    @Test func aHealthCheckWithNoAnswerFails() async throws {
        let refusing = RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let healthcheck = try Subprocess(["healthcheck", "--url", "http://127.0.0.1:\(port)/healthz"])
        #expect(await healthcheck.exitStatus() == 1)
        #expect(healthcheck.stdout.lines.first?.hasPrefix("no answer from http://127.0.0.1:\(port)/healthz") == true)
    }

    /// The health check reads http(s) from a host only: not a file, not another protocol.
    @Test(arguments: ["file:///etc/passwd", "dict://127.0.0.1:11211/stat", "http:///healthz", "gopher://x"])
    func aHealthCheckURLMustBeHTTPToAHost(url: String) async throws {
        let healthcheck = try Subprocess(["healthcheck", "--url", url])
        #expect(await healthcheck.exitStatus() == 2)
        #expect(healthcheck.stderr.lines.contains { $0.contains("--url must") }, "\(healthcheck.stderr.lines)")
        #expect(!healthcheck.stdout.lines.contains { $0.contains("root:") })
    }

    /// The Home Assistant Container image: non-root, a /data it owns, a health check with the binary itself, TZ
    /// honoured (tzdata), the status listener reachable.
    @Test func theContainerImageRunsAsItsOwnUserWithAWritableData() throws {
        let dockerfile = try String(contentsOfFile: Self.repository.appendingPathComponent("config/Dockerfile").path, encoding: .utf8)
        let lines = dockerfile.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("&& mkdir -p /data /config && chown livebridge:livebridge /data"))
        #expect(lines.contains("USER livebridge"))
        #expect(lines.contains(#"HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 CMD ["/usr/local/bin/livebridge", "healthcheck"]"#))
        #expect(lines.contains { $0.hasPrefix("RUN apt-get update") && $0.contains("tzdata") && $0.contains("libwebsockets17 libcurl4 libyaml-0-2") })
        #expect(lines.contains(#"ENTRYPOINT ["/usr/local/bin/livebridge"]"#))
        let command = try #require(lines.first { $0.hasPrefix("CMD") })
        #expect(command.contains(#""run", "--config", "/config/livebridge.yaml", "--data-dir", "/data", "--status-listen", "0.0.0.0:9321""#))
        #expect(lines.firstIndex(of: "USER livebridge")! < lines.firstIndex(of: command)!)
    }

    @Test func badAddonOptionsSayWhichAndWhy() async throws {
        let options = try temporaryFile(#"{"rules": "/config/livebridge.yaml", "log_level": "loud"}"#, suffix: ".json")
        let run = try Subprocess(["run", "--addon-options", options])
        #expect(await run.exitStatus() == 1)
        #expect(run.stderr.lines == ["livebridge run: \(options): log_level must be debug, info, warning or error, not \"loud\""])
    }
}
