import CCurl
import CLibWebSockets
import CYAML
import Testing

/// The three C libraries link and their shims import: the foundation every later stage stands on.
struct SystemLibraryTests {
    @Test func libcurlReportsAVersionWithTLS() {
        let info = curl_version_info(CURLVERSION_TENTH)!.pointee
        #expect(String(cString: info.version).split(separator: ".").count == 3)
        #expect(info.ssl_version != nil)
    }

    @Test func libyamlReportsItsVersion() {
        #expect(String(cString: cyaml_version()).hasPrefix("0."))
    }

    @Test func libwebsocketsHeadroomIsPositive() {
        #expect(clws_pre() >= 16)
    }
}
