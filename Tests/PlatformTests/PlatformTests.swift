import Dispatch
import Foundation
import Platform
import Testing

/// What the daemon uses instead of Foundation's full module, held to Foundation's behaviour.
struct PlatformTests {
    /// As NSString's deletingLastPathComponent.
    @Test(arguments: [("a/b/c.yaml", "a/b"), ("c.yaml", ""), ("/c.yaml", "/"), ("/etc/livebridge/", "/etc"), ("/", "/"), ("a//b", "a"), ("//c", "/")])
    func directoryOfAPath(path: String, expected: String) {
        #expect(PathText.directory(of: path) == expected)
        #expect(PathText.directory(of: path) == (path as NSString).deletingLastPathComponent)
    }

    @Test func joiningPuts1SlashBetween() {
        #expect(PathText.join("/etc/livebridge", "secrets.yaml") == "/etc/livebridge/secrets.yaml")
        #expect(PathText.join("/etc/livebridge/", "secrets.yaml") == "/etc/livebridge/secrets.yaml")
        #expect(PathText.join("", "secrets.yaml") == "secrets.yaml")
    }

    /// As CharacterSet.whitespaces and .whitespacesAndNewlines: spaces, tabs and Unicode Zs (here U+00A0, U+3000).
    @Test func trimming() {
        let text = " \t\u{00A0}\n two words \n\u{3000}"
        #expect(text.trimmingSpaces() == "\n two words \n")
        #expect(text.trimmingWhitespace() == "two words")
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(" \t ".trimmingSpaces() == "")
        #expect("x".trimmingWhitespace() == "x")
    }

    @Test func replacingAllGoesLeftToRightAndIgnoresAnEmptyTarget() {
        #expect("aaa".replacingAll("aa", with: "b") == "ba")
        #expect("washer_dryer_x".replacingAll("_", with: " ") == "washer dryer x")
        #expect("abc".replacingAll("", with: "-") == "abc")
    }

    /// As Foundation's replacingOccurrences(of:with:) and range(of:), for text without combining marks.
    @Test(arguments: [("aaa", "aa", "b"), ("washer_dryer_x", "_", " "), ("{{ a }} and {{ b }}", "{{", "<"), ("abc", "abc", ""),
                      ("abc", "x", "y"), ("ab", "abc", "z"), ("Grüße, Grüße", "ü", "ue"), ("日本語の日本", "日本", "Japan"), ("", "a", "b"),
                      ("x→y→z", "→", " to ")])
    func searchAndReplaceMatchFoundation(text: String, target: String, replacement: String) {
        #expect(text.replacingAll(target, with: replacement) == text.replacingOccurrences(of: target, with: replacement))
        #expect(text.containsText(target) == (text.range(of: target) != nil))
        #expect(text.firstRange(ofText: target) == text.range(of: target))
    }

    /// Matched on whole scalars, as Python's str.replace (and so Jinja's replace filter) does: an "e" followed by a
    /// combining accent is still an "e", where a Character search would see "é".
    @Test func matchingIsByScalarNotByCharacter() {
        let decomposed = "Cafe\u{301} e"
        #expect(decomposed.replacingAll("e", with: "E") == "CafE\u{301} E")
        #expect(decomposed.containsText("e\u{301}"))
        #expect("abc".firstRange(ofText: "") == nil && !"abc".containsText(""))
    }

    @Test func titleCaseUpperCasesEachWordsFirstLetter() {
        #expect("washer dryer".titleCased == "Washer Dryer")
        #expect("they're LOUD".titleCased == "They're Loud")
        #expect("a-b c2d".titleCased == "A-B C2d")
    }

    @Test func aDetachedThreadRunsItsBodyUnderItsName() {
        let named = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let seen = ThreadName()
        DetachedThread.start(name: "livebridge-test-thread") {
            named.wait()
            seen.value = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            done.signal()
        }
        named.signal()  // start has returned: the name is set
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(seen.value == "livebridge-test\n", "the system keeps 15 bytes")
    }

    /// A sanitizer's allocator replaces glibc's, and what its mallopt answers is its own (make sanitize).
    static let sanitized = ["__tsan_init", "__asan_init"].contains { (name: String) in dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) != nil }

    @Test(.enabled(if: !sanitized, "a sanitizer's allocator replaces glibc's mallopt"))
    func theArenaLimitIsAcceptedByGlibc() {
        #expect(HeapArenas.limit(to: 8) == (ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil))
    }
}

private final class ThreadName: @unchecked Sendable {
    var value = ""
}
