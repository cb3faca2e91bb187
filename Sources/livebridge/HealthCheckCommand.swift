import FoundationEssentials
import HTTPClient

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
        let request = HTTPRequest(method: "GET", url: url)
        do {
            let response = try await HTTPClient().send(request)
            print("\(response.status) \(String(decoding: response.body, as: UTF8.self))")
            return response.status == 200 ? 0 : 1
        } catch {
            print("no answer from \(url): \(error)")
            return 1
        }
    }
}
