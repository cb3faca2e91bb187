import Glibc

/// The system's bundle of trusted certificate authorities (PEM), for TLS to the push services and Home Assistant when
/// no `ca_file` is given. libcurl and OpenSSL look where the distribution that built them keeps it (Debian:
/// /etc/ssl/certs/ca-certificates.crt); the release tarball carries Debian's, so on another distribution they would
/// look in the wrong place. Looked up once, as Go's crypto/x509 does: `SSL_CERT_FILE` when set, else the first of the
/// distributions' usual places that exists; nil leaves the libraries' own default.
public enum SystemCertificates {
    public static let bundle: String? = find(environment: getenv("SSL_CERT_FILE").map { String(cString: $0) })

    /// Debian/Ubuntu, Fedora/RHEL/CentOS, openSUSE, Alpine/Arch/others, RHEL's extracted trust.
    static let places = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    ]

    static func find(environment: String?, exists: (String) -> Bool = { access($0, R_OK) == 0 }) -> String? {
        if let environment, !environment.isEmpty { return environment }
        return places.first(where: exists)
    }
}
