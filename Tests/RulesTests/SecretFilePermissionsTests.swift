import Foundation
import Rules
import Testing

/// Files holding secrets are checked for who can read them.
struct SecretFilePermissionsTests {
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-secrets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func secretsReadableByOthersAreWarnedAbout() throws {
        let directory = try folder()
        try "ha_token: x\n".write(toFile: directory + "/secrets.yaml", atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory + "/secrets.yaml")
        #expect(SecretFilePermissions.warnings(configPath: directory + "/livebridge.yaml")
                    == ["\(directory)/secrets.yaml holds secrets and is readable by every user of this machine (mode 644); chmod 600 \(directory)/secrets.yaml"])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory + "/secrets.yaml")
        #expect(SecretFilePermissions.warnings(configPath: directory + "/livebridge.yaml").isEmpty)
    }
}
