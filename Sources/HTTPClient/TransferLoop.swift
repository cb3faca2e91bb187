import CCurl
import Platform
import Synchronization

/// What runs a client's transfers: takes them from any thread and calls their completions where it drives libcurl.
protocol TransferDriver: Sendable {
    /// Queues a transfer; its completion is called on the driver's thread.
    func submit(_ transfer: Transfer)
    /// Ends a transfer whose caller stopped waiting: it fails with `CURLE_ABORTED_BY_CALLBACK` (at once if it is
    /// queued or running; nothing happens if it has finished).
    func cancel(_ transfer: Transfer)
    /// Ends the driver: transfers still running fail with `CURLE_ABORTED_BY_CALLBACK`.
    func shutdown()
}

/// libcurl's multi interface on a thread of its own: every transfer of an `HTTPClient` runs there, concurrently, and
/// the transfers share one connection cache (kept-alive connections, HTTP/2 multiplexing over TLS). For a client
/// with no event loop to run on (commands, tests); the daemon's backends run theirs on the socket's thread
/// (`HostedTransfers`).
///
/// Other threads hand transfers over with `submit`, which queues them and wakes the loop with `curl_multi_wakeup`.
/// Easy handles are created, reused and freed on the loop's thread only. A thread per client, not per request:
/// a push costs no thread creation.
final class TransferLoop: TransferDriver, @unchecked Sendable {
    private struct Inbox {
        var transfers: [Transfer] = []
        /// Transfers whose task was cancelled: ended on the loop, wherever they are (queued, running or done).
        var cancelled: [Transfer] = []
        var stopping = false
        /// A wake-up went out that the loop has not answered yet (it takes the inbox after it): a burst of submits wakes
        /// it once, not once each.
        var awoken = false
    }

    private let options: HTTPClient.Options
    private let inbox = Locked(Inbox())
    /// Confined to the loop's thread, but for the wake-ups, which go out under the inbox's lock.
    private let table: TransferTable

    init(options: HTTPClient.Options) {
        self.options = options
        table = TransferTable(options: options)
        DetachedThread.start(name: "http") { [self] in run() }
    }

    func submit(_ transfer: Transfer) {
        inbox.withLock { inbox in
            inbox.transfers.append(transfer)
            wake(&inbox)
        }
    }

    func cancel(_ transfer: Transfer) {
        inbox.withLock { inbox in
            inbox.cancelled.append(transfer)
            wake(&inbox)
        }
    }

    /// Under the inbox's lock, so the multi handle is not yet freed when the wake-up goes out.
    private func wake(_ inbox: inout Inbox) {
        guard !inbox.awoken else { return }
        inbox.awoken = true
        curl_multi_wakeup(table.multi)
    }

    /// The wake-up is sent under the lock the loop reads `stopping` with, so the multi handle is not yet freed when it
    /// goes out.
    func shutdown() {
        inbox.withLock { inbox in
            inbox.stopping = true
            curl_multi_wakeup(table.multi)
        }
    }

    private func run() {
        while true {
            let (incoming, cancelled, stopping) = inbox.withLock { inbox in
                defer { inbox.transfers = []; inbox.cancelled = []; inbox.awoken = false }
                return (inbox.transfers, inbox.cancelled, inbox.stopping)
            }
            if stopping {
                table.close(failing: TransferTable.shutDown, also: incoming)
                return
            }
            for transfer in incoming { table.admit(transfer) }
            for transfer in cancelled { table.abandon(transfer) }
            var stillRunning: Int32 = 0
            curl_multi_perform(table.multi, &stillRunning)
            table.collectFinished()
            curl_multi_poll(table.multi, nil, 0, Int32(clamping: HTTPClient.milliseconds(options.idlePoll)), nil)
        }
    }
}
