import Dispatch
import Dispatch
import FoundationEssentials
import Glibc

/// Turns SIGINT/SIGTERM into a callback; a second signal exits at once.
final class SignalWatcher: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private var received = 0

    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "signals")
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [unowned self] in
                received += 1
                if received > 1 { exit(130) }
                handler()
            }
            source.resume()
            sources.append(source)
        }
    }
}
