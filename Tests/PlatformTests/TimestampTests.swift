import Platform
import Testing

struct TimestampTests {
    @Test func formatsLikePythonsIsoformatInUTC() {
        #expect(Timestamp.iso8601(0) == "1970-01-01T00:00:00+00:00")
        #expect(Timestamp.iso8601(1795343668.42) == "2026-11-22T10:34:28.420000+00:00")
        #expect(Timestamp.iso8601(951_782_400) == "2000-02-29T00:00:00+00:00")
    }

    @Test func logTimeHasMillisecondsTruncatedAndZ() {
        #expect(Timestamp.logTime(0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.logTime(1795343668.4209) == "2026-11-22T10:34:28.420Z")
        #expect(Timestamp.logTime(1795343668.9999) == "2026-11-22T10:34:28.999Z")
    }

    @Test func parsesOffsetsFractionsAndZ() {
        #expect(Timestamp.epoch(fromISO8601: "2026-11-22T10:34:28.42+00:00") == 1795343668.42)
        #expect(Timestamp.epoch(fromISO8601: "2026-11-22T11:34:28+01:00") == 1795343668)
        #expect(Timestamp.epoch(fromISO8601: "2026-11-22T10:34:28Z") == 1795343668)
        #expect(Timestamp.epoch(fromISO8601: "2026-11-22T10:34") == 1795343640)
        #expect(Timestamp.epoch(fromISO8601: "2026-11-22") == 1795305600, "a date alone is its midnight, as Python's fromisoformat")
    }

    @Test func rejectsWhatIsNotATimestamp() {
        for text in ["", "unknown", "2026-13-01T00:00:00", "2026-02-30", "2026-11-22T10:34:28+0", "2026-11-22T25:00:00"] {
            #expect(Timestamp.epoch(fromISO8601: text) == nil, "\(text)")
        }
    }

    @Test func roundTrips() {
        for epoch in [1.0, 1_700_000_000.123456, 4_102_444_800.5] {
            #expect(Timestamp.epoch(fromISO8601: Timestamp.iso8601(epoch)) == epoch)
        }
    }
}
