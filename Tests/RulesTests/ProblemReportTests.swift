import LiveActivity
import Rules
import Testing

struct ProblemReportTests {
    let unavailable = PayloadIssue(path: "progress.value", "float got string 'unavailable', which is not a number, and no default")
    let other = PayloadIssue(path: "footer_right", "division by zero")

    @Test func aProblemIsReportedOncePerActivityUntilItClears() {
        var report = ProblemReport()
        #expect(report.newProblems(activity: "washer", [unavailable]) == [unavailable])
        #expect(report.newProblems(activity: "washer", [unavailable]) == [])
        #expect(report.newProblems(activity: "dryer", [unavailable]) == [unavailable])
        #expect(report.newProblems(activity: "washer", [unavailable, other]) == [other])
        #expect(report.newProblems(activity: "washer", []) == [])
        #expect(report.newProblems(activity: "washer", [unavailable]) == [unavailable])
    }
}
