import Dispatcher
import Foundation
import HTTPClient
import HomeAssistant
import JSON
import Rules

/// `livebridge run`: Home Assistant → rules → dispatcher, until stopped.
///
/// Subscribes exactly the entities the rules read, re-evaluates only the activities that read a changed entity, and
/// hands the edges and changes to the dispatcher. SIGHUP reloads the rules (a broken file keeps the old ones); SIGTERM
/// stops taking changes, sends what is due within a deadline, and closes the socket.
public actor LiveBridgeService {
    public struct Options: Sendable {
        public var configPath: String
        public var dataDirectory: String
        public var dryRun = false
        public var shutdownDeadline: Duration = .seconds(5)
        public init(configPath: String, dataDirectory: String) {
            self.configPath = configPath
            self.dataDirectory = dataDirectory
        }
    }

    public struct StartupError: Error, CustomStringConvertible {
        public let description: String
    }

    let options: Options
    let logger: Logger
    private var engine: ActivityEngine
    private let dispatcher: Dispatcher
    private let connection: HomeAssistantConnection
    private var stopping = false

    public init(options: Options, logger: Logger) throws {
        self.options = options
        self.logger = logger
        let rules: RulesFile
        switch RulesLoader.load(file: options.configPath) {
        case .failure(let errors):
            throw StartupError(description: errors.description)
        case .success(let loaded): rules = loaded
        }
        guard let settings = rules.homeAssistant else {
            throw StartupError(description: "\(options.configPath): homeassistant: (url and token) is required to run")
        }
        let stateFile: DeliveryStateFile
        do { stateFile = try DeliveryStateFile(directory: options.dataDirectory) } catch {
            throw StartupError(description: "\(error)")
        }
        var configuration = try ConnectionConfiguration(url: settings.url, token: settings.token, caFile: settings.caFile,
                                                        allowSelfSigned: settings.allowSelfSigned)
        configuration.startupPollInterval = .seconds(2)
        let connection = try HomeAssistantConnection(configuration: configuration) { event in
            if event.isError { logger.warning(event.description) } else { logger.info(event.description) }
        }
        self.connection = connection
        let backends: [any PushBackend] = rules.backends.values.sorted { $0.name < $1.name }.map { backend in
            if options.dryRun { return DryRunBackend(name: backend.name, logger: logger) }
            return BackendFactory.make(backend, client: HTTPClient()) { domain, service, data throws(HomeAssistantPushBackend.ServiceCallError) in
                do { _ = try await connection.callService(domain: domain, service: service, data: data) } catch let error as HomeAssistantError {
                    throw .init(code: error.code)
                } catch { throw .init(code: "unknown_error") }
            }
        }
        dispatcher = Dispatcher(backends: backends, stateFile: stateFile, onPush: { record in
            var outcome = "\(record.report.outcome)"
            if case .delivered = record.report.outcome { outcome = "delivered" }
            logger.info("push", ["activity": record.activity, "backend": record.backend, "kind": record.kind.rawValue,
                                 "status": record.report.status.map(String.init) ?? "-", "outcome": outcome,
                                 "code": record.report.code ?? "-"])
        }, log: { logger.warning($0) })
        engine = ActivityEngine(rules: rules)
    }

    /// Runs until `stop()`; returns the exit status.
    public func run() async -> Int32 {
        let running = await dispatcher.runningActivities
        engine = ActivityEngine(rules: engine.rules, running: Set(running.map(\.activity)))
        if !running.isEmpty { logger.info("resuming activities on phones", ["activities": running.map(\.activity).joined(separator: ",")]) }
        let entities = engine.rules.entityIDs.sorted()
        logger.info("starting", ["activities": String(engine.rules.activities.count), "entities": String(entities.count),
                                 "dry_run": String(options.dryRun)])
        connection.start(entityIDs: entities)
        var evaluatedAll = false
        while let batch = await connection.changes.next() {
            guard !stopping else { break }
            var ids = engine.apply(batch)
            if !evaluatedAll {
                // The first snapshot: every activity, also those that read no entity.
                ids = engine.rules.activities.map(\.id)
                evaluatedAll = true
            }
            await dispatch(engine.evaluate(ids: ids, now: Date().timeIntervalSince1970))
        }
        return connection.currentPhase == .rejected ? 1 : 0
    }

    private func dispatch(_ result: (commands: [ActivityEngine.Command], problems: [String])) async {
        for problem in result.problems { logger.warning(problem) }
        for command in result.commands {
            logger.debug("queued", ["activity": command.activity, "backend": command.backend, "event": command.event.name])
            await dispatcher.submit(activity: command.activity, backend: command.backend, budget: command.budget, command.event)
        }
    }

    /// SIGHUP: loads the file again; on any error the old rules keep running and every error is logged.
    public func reload() async {
        switch RulesLoader.load(file: options.configPath) {
        case .failure(let errors):
            logger.error("reload failed; the previous rules keep running", ["errors": String(errors.errors.count)])
            for error in errors.errors { logger.error(error.description) }
        case .success(let rules):
            let before = Set(engine.rules.entityIDs)
            let result = engine.reload(rules, now: Date().timeIntervalSince1970)
            if Set(rules.entityIDs) != before { connection.setEntities(rules.entityIDs.sorted()) }
            logger.info("reloaded", ["activities": String(rules.activities.count)])
            await dispatch(result)
        }
    }

    /// SIGTERM/SIGINT: no more changes; what is due goes out within the deadline; the socket closes.
    public func stop() async {
        guard !stopping else { return }
        stopping = true
        logger.info("stopping: sending what is due", ["deadline": "\(options.shutdownDeadline)"])
        let complete = await dispatcher.flush(deadline: options.shutdownDeadline)
        if !complete { logger.warning("stopping with pushes still pending; they resume from the state file next start") }
        await connection.stop()
    }
}
