import Glibc
import Platform

/// Files holding secrets that other users of the machine can read: worth a warning, since the token in them opens
/// Home Assistant (an administrator's token opens all of it).
public enum SecretFilePermissions {
    /// A warning for `path` if it exists and is readable by users other than its owner and group.
    public static func warning(for path: String, holding what: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IROTH != 0 else { return nil }
        let mode = String(info.st_mode & 0o777, radix: 8)
        return "\(path) holds \(what) and is readable by every user of this machine (mode \(mode)); chmod 600 \(path)"
    }

    /// The warnings for a rules file's secrets.yaml.
    public static func warnings(configPath: String) -> [String] {
        let secrets = PathText.join(PathText.directory(of: configPath), "secrets.yaml")
        return [warning(for: secrets, holding: "secrets")].compactMap { $0 }
    }
}
