import Rules
import Testing

/// Values given through `!secret` are never printed: whatever error they cause names them as `!secret NAME`.
struct SecretErrorsTests {
    /// Each secret's wrong value, distinctive enough to find in any message, and where the error should point.
    static let secrets = [
        "phone_service": "notify.Phone Of-Secret-1", "backend_name": "nobackend-secret-2", "template_name": "notemplate-secret-3",
        "pushward_sound": "nosound-secret-4", "washer_slug": "bad/slug-secret-5", "washer_job": "bad job secret-6",
        "long_stream": String(repeating: "s", count: 90) + "/secret-7",
    ]

    @Test func noSecretValueAppearsInAnyErrorOrWarning() throws {
        let folder = try ConfigFolder([
            "livebridge.yaml": """
                backends:
                  aivi: { type: aivi, token: t }
                  pulse: { type: islandpulse, token: p }
                  phone: { type: homeassistant, service: !secret phone_service }
                  ward: { type: pushward, token: w }
                  smith: { type: activitysmith, token: s }
                activities:
                  washer:
                    backend: [aivi, pulse]
                    slug: !secret washer_slug
                    job_id: !secret washer_job
                    active_when: "{{ true }}"
                    template: generic
                    progress: 0.5
                  dryer:
                    backend: !secret backend_name
                    active_when: "{{ true }}"
                    template: generic
                    progress: 0.5
                  oven:
                    backend: ward
                    sound: !secret pushward_sound
                    active_when: "{{ true }}"
                    template: !secret template_name
                  stream:
                    backend: smith
                    stream_key: !secret long_stream
                    active_when: "{{ true }}"
                    template: progress
                    title: t
                    percentage: 5

                """,
            "secrets.yaml": Self.secrets.map { "\($0.key): \"\($0.value)\"" }.joined(separator: "\n") + "\n",
        ])
        guard case .failure(let failure) = RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]) else {
            Issue.record("wrong values accepted"); return
        }
        let text = failure.description
        for (name, value) in Self.secrets {
            #expect(!text.contains(value), "the value of \(name) is printed: \(text)")
            #expect(!text.contains(String(value.prefix(37))) && !text.contains(String(value.prefix(80))), "a cut of \(name) is printed")
            #expect(text.contains("!secret \(name)"), "the error for \(name) does not name it: \(text)")
        }
    }
}
