"""Templates rendered by the real Home Assistant and by LiveBridge on the same states and the same now().

The corpus is docs/template-examples.yaml. Each template goes to Home Assistant's POST /api/template and, in one
batch, to `livebridge template`; the answers are compared as text. An entry marked `differs:` or `refused:` is a
known difference (its reason written there); every other entry must give the same text, and a marked one that now
matches must lose its mark. Home Assistant's answers are written to Tests/e2e/template-results.json, which `make test`
holds LiveBridge to offline.
"""
import asyncio
import json
import os
import subprocess

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "docs", "template-examples.yaml")
RESULTS = os.path.join(ROOT, "Tests", "e2e", "template-results.json")


def load_corpus():
    with open(CORPUS) as f:
        return yaml.safe_load(f)


async def set_time_zone(ws_call, zone):
    await ws_call({"type": "config/core/update", "time_zone": zone})


async def run(session, ha, token, livebridge, work, ws_call, log):
    corpus = load_corpus()
    headers = {"Authorization": f"Bearer {token}"}
    zone = corpus.get("time_zone", "UTC")
    await set_time_zone(ws_call, zone)
    # Twice, a moment apart: an entity core also computes (the e2e configuration's template sensors) may render
    # itself once core has started, over the first write.
    for attempt in range(2):
        for entity_id, entry in corpus["states"].items():
            body = {"state": entry["state"], "attributes": entry.get("attributes", {})}
            async with session.post(f"{ha.base}/api/states/{entity_id}", json=body, headers=headers) as response:
                assert response.status in (200, 201), f"setting {entity_id}: HTTP {response.status}"
        if attempt == 0:
            await asyncio.sleep(2)
    # The very states Home Assistant holds, last_changed included, are what LiveBridge reads.
    async with session.get(f"{ha.base}/api/states", headers=headers) as response:
        states = await response.json()
    states_file = os.path.join(work, "template-states.json")
    with open(states_file, "w") as f:
        json.dump(states, f)

    async def render(template):
        async with session.post(f"{ha.base}/api/template", json={"template": template}, headers=headers) as response:
            text = await response.text()
            if response.status == 200:
                return {"result": text}
            try:
                return {"error": json.loads(text).get("message", text)}
            except ValueError:
                return {"error": text}

    now = (await render("{{ now().isoformat() }}"))["result"]
    home = {}
    for entry in corpus["templates"]:
        home[entry["template"]] = await render(entry["template"])
    requests = "".join(json.dumps({"id": i, "template": e["template"]}) + "\n" for i, e in enumerate(corpus["templates"]))
    # Templates only Home Assistant can render (its registries) are asked of it, as the daemon does.
    token_file = os.path.join(work, "template-token")
    with open(token_file, "w") as f:
        f.write(token)
    os.chmod(token_file, 0o600)
    answer = subprocess.run([livebridge, "template", "--states", states_file, "--at", now, "--url", ha.base,
                             "--token-file", token_file], input=requests,
                            capture_output=True, text=True, timeout=60, env={**os.environ, "TZ": zone})
    assert answer.returncode == 0, answer.stderr
    ours = {int(line["id"]): line for line in map(json.loads, answer.stdout.splitlines())}

    same, known, problems = 0, 0, []
    for i, entry in enumerate(corpus["templates"]):
        template, theirs, mine = entry["template"], home[entry["template"]], ours[i]
        equal = "result" in theirs and theirs["result"] == mine.get("result")
        marked = "differs" in entry or "refused" in entry
        if equal:
            same += 1
            if marked:
                problems.append(f"now the same, remove its mark: {template}")
        elif marked:
            known += 1
        elif "error" in theirs and "error" in mine:
            same += 1  # both refuse
        else:
            problems.append(f"{template}\n    Home Assistant: {theirs}\n    LiveBridge:     {mine}")
    total = len(corpus["templates"])
    with open(RESULTS, "w") as f:
        json.dump({"time_zone": zone, "now": now, "states": states_file and _portable(states), "results": home}, f, indent=1, sort_keys=True)
        f.write("\n")
    log(f"templates: {same} of {total} the same as Home Assistant ({100 * same // total}%), {known} known differences")
    assert not problems, "templates that differ from Home Assistant:\n  " + "\n  ".join(problems)


def _portable(states):
    """The states of the corpus's domains, as Home Assistant gave them: whole domains, so that templates iterating
    one (`states.input_boolean`) see offline what they saw in Home Assistant."""
    domains = {entity_id.split(".")[0] for entity_id in load_corpus()["states"]}
    return sorted((s for s in states if s["entity_id"].split(".")[0] in domains), key=lambda s: s["entity_id"])
