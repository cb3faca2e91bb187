// swift-tools-version:6.0
import PackageDescription

// LiveBridge: Home Assistant entities → iOS Live Activities.
// One module per stage of the flow; C libraries come from Debian's -dev packages, no SwiftPM dependencies.
let package = Package(
    name: "LiveBridge",
    products: [
        .executable(name: "livebridge", targets: ["livebridge"]),
        .library(name: "HomeAssistant", targets: ["HomeAssistant"]),
        .library(name: "HomeAssistantSimulator", targets: ["HomeAssistantSimulator"]),
    ],
    targets: [
        .systemLibrary(name: "CLibWebSockets", pkgConfig: "libwebsockets", providers: [.apt(["libwebsockets-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // What the daemon needs beyond FoundationEssentials (threads, trimming), so Foundation's full module and ICU stay out.
        .target(name: "Platform"),
        // libwebsockets on a thread of its own: client and server sockets, timers, frame reassembly.
        .target(name: "WebSocketTransport", dependencies: ["Platform", "CLibWebSockets"]),
        // JSON values, a strict parser and a deterministic encoder.
        .target(name: "JSON"),
        // The Home Assistant WebSocket API: protocol, entity store, reconnect.
        .target(name: "HomeAssistant", dependencies: ["Platform", "JSON", "WebSocketTransport"]),
        // Live Activity payloads for the five services (Aivi, Island Pulse, Home Assistant, PushWard, ActivitySmith): schemas and validation.
        .target(name: "LiveActivity", dependencies: ["Platform", "JSON"]),
        // What the phone will show: the Lock Screen and Dynamic Island drawn as deterministic SVG.
        .target(name: "Preview", dependencies: ["Platform", "JSON"]),
        // Home Assistant's template language as Home Assistant renders it: compiled once, evaluated within bounds.
        .target(name: "Templates", dependencies: ["Platform", "JSON", "HomeAssistant"]),
        // The rules file: YAML with positions, activity evaluation.
        .target(name: "Rules", dependencies: ["Platform", "CYAML", "JSON", "HomeAssistant", "LiveActivity", "Templates"]),
        // HTTP over libcurl, at the edge: the push backends' transport.
        .target(name: "HTTPClient", dependencies: ["Platform", "CCurl", "WebSocketTransport"]),
        // The dispatcher: per-activity lifecycle, update budget, retries.
        .target(name: "Dispatcher", dependencies: ["Platform", "LiveActivity", "JSON", "HTTPClient"]),
        // The five services as documented, over real HTTP on 127.0.0.1: for tests and the local preview.
        .target(name: "FakePushServices", dependencies: ["Platform", "WebSocketTransport", "JSON", "LiveActivity"]),
        // The preview server of `preview-server` and the demo: the fakes answering any token, with the page that draws what they were shown.
        .target(name: "PreviewServer", dependencies: ["FakePushServices", "JSON", "Preview", "WebSocketTransport"]),
        // The running service: connection → rules → dispatcher, logging, signals.
        .target(name: "LiveBridge", dependencies: ["Platform", "HomeAssistant", "Rules", "Templates", "LiveActivity", "Dispatcher", "HTTPClient", "JSON", "WebSocketTransport", "Preview"]),
        // A fake Home Assistant for tests, the demo and the benchmark.
        .target(name: "HomeAssistantSimulator", dependencies: ["Platform", "HomeAssistant", "JSON", "WebSocketTransport"]),
        .executableTarget(name: "livebridge", dependencies: ["Platform", "HomeAssistant", "HomeAssistantSimulator", "JSON", "WebSocketTransport", "LiveActivity", "Rules", "Templates", "Dispatcher", "HTTPClient", "LiveBridge", "PreviewServer", "Preview"]),
        // make bench-rules: rule evaluation speed, in a release build.
        .executableTarget(name: "RulesBenchmark", dependencies: ["Rules", "Templates", "LiveActivity", "HomeAssistant", "JSON"]),
        // CPU time and memory of another process, from /proc: for the benchmark and the resilience suite.
        .target(name: "ProcessMeasurement"),
        // Tests only: a Home Assistant connection run as a task of its own (the product runs it as a child).
        .target(name: "ConnectionTestSupport", dependencies: ["HomeAssistant"]),
        // make fuzz: libFuzzer targets over what comes from outside (built with -sanitize=fuzzer,address).
        .target(name: "FuzzTargets", dependencies: ["HomeAssistant", "JSON", "Rules", "Templates", "Dispatcher", "LiveActivity", "WebSocketTransport"]),
        .executableTarget(name: "LiveBridgeFuzz", dependencies: ["FuzzTargets"]),
        // make bench: livebridge run as a subprocess under the simulator's load.
        .executableTarget(name: "LiveBridgeBenchmark", dependencies: ["HomeAssistantSimulator", "FakePushServices", "HTTPClient", "JSON", "ProcessMeasurement", "WebSocketTransport"]),
        .testTarget(name: "HomeAssistantTests", dependencies: ["ConnectionTestSupport", "ProcessMeasurement", "Platform", "HomeAssistant", "HomeAssistantSimulator", "WebSocketTransport", "JSON"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "WebSocketTransportTests", dependencies: ["Platform", "WebSocketTransport"]),
        .testTarget(name: "HTTPClientTests", dependencies: ["ConnectionTestSupport", "Platform", "HTTPClient", "WebSocketTransport"]),
        .testTarget(name: "LiveBridgeTests", dependencies: ["ConnectionTestSupport", "Platform", "LiveBridge", "FakePushServices", "LiveActivity", "WebSocketTransport", "Dispatcher", "HomeAssistant", "HomeAssistantSimulator", "Rules", "Templates", "JSON", "HTTPClient"]),
        .testTarget(name: "PreviewTests", dependencies: ["Preview", "JSON"], exclude: ["Golden"]),
        .testTarget(name: "ResilienceTests", dependencies: ["ConnectionTestSupport", "ProcessMeasurement", "Dispatcher", "LiveActivity", "HTTPClient", "HomeAssistant", "HomeAssistantSimulator", "JSON", "Rules"]),
        .testTarget(name: "DispatcherTests", dependencies: ["ConnectionTestSupport", "Platform", "Dispatcher", "LiveActivity", "FakePushServices", "PreviewServer", "HTTPClient", "JSON"]),
        .testTarget(name: "LiveActivityTests", dependencies: ["LiveActivity", "JSON"]),
        .testTarget(name: "TemplatesTests", dependencies: ["Templates", "JSON", "HomeAssistant", "Platform"],
                    exclude: ["Golden", "python-re-cases.py"]),
        .testTarget(name: "RulesTests", dependencies: ["Rules", "Templates", "JSON", "HomeAssistant", "LiveActivity", "Platform"]),
        // The real binary as a subprocess.
        .testTarget(name: "LiveBridgeCLITests", dependencies: ["Platform", "Rules", "HomeAssistantSimulator", "JSON", "FakePushServices", "HTTPClient", "ProcessMeasurement", "WebSocketTransport"]),
        .testTarget(name: "PlatformTests", dependencies: ["Platform"]),
        // The fuzzers' kept corpus and every finding, replayed through the targets on each make test.
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets"]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["CCurl", "CYAML", "CLibWebSockets"]),
    ],
    swiftLanguageModes: [.v6]
)

// The compiler keeps the hygiene: every member's module imported where it is used, imports internal unless a public
// signature needs them, existentials spelled `any`.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("ExistentialAny"),
    ]
}
