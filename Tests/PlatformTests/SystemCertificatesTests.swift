@testable import Platform
import Testing

/// The tarball carries Debian's libcurl and OpenSSL, which look for Debian's CA bundle: the system's is found where
/// each distribution keeps it (the reviewer's finding: on a Fedora layout every push failed with curl 77).
struct SystemCertificatesTests {
    @Test func eachDistributionsBundleIsFound() {
        #expect(SystemCertificates.find(environment: nil) { $0 == "/etc/ssl/certs/ca-certificates.crt" } == "/etc/ssl/certs/ca-certificates.crt")
        #expect(SystemCertificates.find(environment: nil) { $0 == "/etc/pki/tls/certs/ca-bundle.crt" } == "/etc/pki/tls/certs/ca-bundle.crt", "Fedora, RHEL")
        #expect(SystemCertificates.find(environment: nil) { $0 == "/etc/ssl/ca-bundle.pem" } == "/etc/ssl/ca-bundle.pem", "openSUSE")
        #expect(SystemCertificates.find(environment: "/opt/my-ca.pem") { _ in true } == "/opt/my-ca.pem", "SSL_CERT_FILE first")
        #expect(SystemCertificates.find(environment: "") { _ in false } == nil, "none: the libraries' own default")
    }
}
