import Glibc
import Platform
import Testing

/// Signals reach the sequence instead of their default action, in order, and get their default back after.
@Suite(.serialized) struct UnixSignalsTests {
    @Test func raisedSignalsArriveInTheSequenceInOrder() async {
        let signals = UnixSignals([.user1, .user2])
        kill(getpid(), SIGUSR1)
        var iterator = signals.makeAsyncIterator()
        #expect(await iterator.next() == .user1)
        kill(getpid(), SIGUSR2)
        #expect(await iterator.next() == .user2)
        kill(getpid(), SIGUSR1)
        #expect(await iterator.next() == .user1)
    }

    @Test func lettingTheSequenceGoRestoresTheDefaultAction() {
        do {
            let signals = UnixSignals([.user2])
            #expect(disposition(SIGUSR2) == "handled")
            withExtendedLifetime(signals) {}
        }
        #expect(disposition(SIGUSR2) == "default")
    }

    @Test func signalsAreNamedAsUnixNamesThem() {
        #expect("\(UnixSignal.terminate)" == "SIGTERM" && "\(UnixSignal.hangup)" == "SIGHUP" && "\(UnixSignal(rawValue: 31))" == "signal 31")
    }

    private func disposition(_ number: Int32) -> String {
        var current = sigaction()
        sigaction(number, nil, &current)
        let handler = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
        return handler == 1 ? "ignored" : handler == 0 ? "default" : "handled"
    }
}
