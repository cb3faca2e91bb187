import FoundationEssentials
import HTTPClient
import Platform

/// `livebridge healthcheck [--url URL]`: asks a running LiveBridge's /healthz and exits 0 when it answers 200, 1
/// otherwise, saying why. For a container's HEALTHCHECK, where no curl is installed.
enum HealthCheckCommand {
    static let help = """
        usage: livebridge healthcheck [--url URL]

        GETs URL (default http://127.0.0.1:9321/healthz, the container's status listener): exit status 0 when it
        answers 200 (ok or degraded), 1 when it answers otherwise or not at all; the answer is printed.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["url"])
        let url = args["url"] ?? "http://127.0.0.1:9321/healthz"
        if let problem = urlProblem(url) { throw UsageError("--url \(problem)") }
        let request = HTTPRequest(method: "GET", url: url)
        var options = HTTPClient.Options()
        // /healthz answers a few hundred bytes: anything far larger is not LiveBridge.
        options.maximumResponseBody = 64 << 10
        do {
            let response = try await HTTPClient(options: options).send(request)
            print("\(response.status) \(String(decoding: response.body, as: UTF8.self))")
            return response.status == 200 ? 0 : 1
        } catch {
            print("no answer from \(url): \(error)")
            return 1
        }
    }

    /// Why `url` is not an http(s) URL naming a host (nil: it is).
    static func urlProblem(_ url: String) -> String? {
        let rest = url.hasPrefix("http://") ? url.dropFirst(7) : url.hasPrefix("https://") ? url.dropFirst(8) : nil
        guard let rest else { return "must be an http:// or https:// URL (got \(OutsideText.quoted(url)))" }
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty, !host.hasPrefix(":"), !url.unicodeScalars.contains(where: { OutsideText.isUnsafe($0) || $0 == " " }) else {
            return "must name a host, as in http://127.0.0.1:9321/healthz (got \(OutsideText.quoted(url)))"
        }
        return nil
    }
}
