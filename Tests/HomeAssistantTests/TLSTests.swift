import Foundation
import HomeAssistant
import ConnectionTestSupport
import HomeAssistantSimulator
import ProcessMeasurement
import Testing

/// wss:// against the simulator serving a self-signed certificate for 127.0.0.1.
@Suite(.timeLimit(.minutes(1)))
struct TLSTests {
    @Test func aSelfSignedCertificateIsRefusedUnlessTheUserOptsIn() async throws {
        let certificate = try SelfSignedCertificate()
        let simulator = try tlsSimulator(certificate)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await log.wait { $0.filter(\.isDisconnected).count >= 2 })
        #expect(!log.events.contains { $0.isReady })
        #expect(simulator.record.authAttempts == 0)
        let reason = log.events.compactMap { if case .disconnected(let r) = $0 { r } else { nil } }.first ?? ""
        #expect(reason.hasPrefix("connection failed"), "\(reason)")
        await connectionRun.stop()
    }

    @Test func allowingSelfSignedConnects() async throws {
        let certificate = try SelfSignedCertificate()
        let simulator = try tlsSimulator(certificate)
        defer { simulator.stop() }
        let log = EventLog()
        var configuration = try ConnectionConfiguration(url: simulator.url, token: AccessToken(simulatorToken), allowSelfSigned: true)
        configuration.reconnect = ReconnectPolicy(initial: .milliseconds(20), maximum: .milliseconds(100))
        let connection = try HomeAssistantConnection(configuration: configuration) { log.record($0) }
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await log.wait { $0.contains { $0.isReady } })
        await connectionRun.stop()
    }

    @Test func aCustomCAFileIsTrusted() async throws {
        let certificate = try SelfSignedCertificate()
        let simulator = try tlsSimulator(certificate)
        defer { simulator.stop() }
        let log = EventLog()
        var configuration = try ConnectionConfiguration(url: simulator.url, token: AccessToken(simulatorToken), caFile: certificate.certificatePath)
        configuration.reconnect = ReconnectPolicy(initial: .milliseconds(20), maximum: .milliseconds(100))
        let connection = try HomeAssistantConnection(configuration: configuration) { log.record($0) }
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await log.wait { $0.contains { $0.isReady } }, "\(log.lines)")
        await connectionRun.stop()
    }

    func tlsSimulator(_ certificate: SelfSignedCertificate) throws -> HomeAssistantSimulator {
        var options = HomeAssistantSimulator.Options(token: simulatorToken)
        options.tlsCertificate = (certificate.certificatePath, certificate.keyPath)
        return try HomeAssistantSimulator(options: options)
    }
}

/// A throwaway certificate for 127.0.0.1 made with the openssl command.
struct SelfSignedCertificate {
    let certificatePath: String
    let keyPath: String

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificatePath = directory.appendingPathComponent("cert.pem").path
        keyPath = directory.appendingPathComponent("key.pem").path
        let process = try ChildProcess("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                             "-keyout", keyPath, "-out", certificatePath, "-days", "2", "-subj", "/CN=127.0.0.1",
                             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                             "-addext", "basicConstraints=critical,CA:TRUE"], standardOutput: .null, standardError: .null)
        // Bounded: it blocks one of the test pool's threads while it runs.
        let exited = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            process.wait()
            exited.signal()
        }
        guard exited.wait(timeout: .now() + 30) == .success else {
            process.signal(SIGKILL)
            throw CocoaError(.fileWriteUnknown)
        }
        guard process.wait() == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}
