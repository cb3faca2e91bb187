"""Templates rendered by the real Home Assistant and by LiveBridge on the same states and the same now().

Two corpora, one after the other in the same Home Assistant, each on its own states (the examples' entities are
removed before the user corpus's are set: what a template iterating a domain sees, and in which order, belongs to one
corpus; the two define no entity in common):
- docs/template-examples.yaml, the team's own examples. An entry marked `differs:` or `refused:` is a known difference
  (its reason written there); every other entry must give the same text, and a marked one that now matches must lose
  its mark.
- Tests/e2e/user-templates.yaml, templates as users wrote them (each with its `source:`). Its differences are measured,
  not asserted: the score is logged and every difference written to Tests/e2e/user-templates-differences.txt.

Each template goes to Home Assistant's POST /api/template and, in one batch, to `livebridge template`; the answers are
compared as text. Home Assistant's answers are written to Tests/e2e/template-results.json (the user corpus's under
"user", with all of Home Assistant's states in its order), which `make test` holds LiveBridge to offline.

A state value (or a string attribute) of the form `@now+1h30m` or `@now-2d|%Y-%m-%d %H:%M:%S` is a time relative to
the run's now(): ISO 8601 in UTC, formatted in Home Assistant's time zone after `|`, or `|timestamp` its Unix time (an
attribute's number; a state's text). Countdowns stay countdowns
whenever the corpus runs.
"""
import asyncio
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import time
import zoneinfo

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "docs", "template-examples.yaml")
USER_CORPUS = os.path.join(ROOT, "Tests", "e2e", "user-templates.yaml")
RESULTS = os.path.join(ROOT, "Tests", "e2e", "template-results.json")
USER_DIFFERENCES = os.path.join(ROOT, "Tests", "e2e", "user-templates-differences.txt")
RENDERED_BY_HOME_ASSISTANT = "failed: rendered by Home Assistant ("
RELATIVE = re.compile(r"^@now((?:[+-]\d+[smhdw])*)(?:\|(.+))?$", re.S)
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def load_corpus():
    return load(CORPUS)


def load_user_corpus():
    return load(USER_CORPUS)


def resolve(value, now, zone):
    """`@now±…[|format]` as a time relative to now; anything else as it is (lists and mappings walked)."""
    if isinstance(value, dict):
        return {k: resolve(v, now, zone) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, now, zone) for v in value]
    if not isinstance(value, str) or not (match := RELATIVE.match(value)):
        return value
    moment = now
    for sign, amount, unit in re.findall(r"([+-])(\d+)([smhdw])", match.group(1)):
        delta = datetime.timedelta(**{UNITS[unit]: int(amount)})
        moment = moment + delta if sign == "+" else moment - delta
    if match.group(2) == "timestamp":
        return moment.timestamp()
    if match.group(2):
        return moment.astimezone(zoneinfo.ZoneInfo(zone)).strftime(match.group(2))
    return moment.astimezone(datetime.timezone.utc).replace(microsecond=0).isoformat()


async def set_time_zone(ws_call, zone):
    await ws_call({"type": "config/core/update", "time_zone": zone})


async def run(session, ha, token, livebridge, work, ws_call, log):
    corpus, user = load_corpus(), load_user_corpus()
    headers = {"Authorization": f"Bearer {token}"}
    zone = corpus.get("time_zone", "UTC")
    assert user.get("time_zone", zone) == zone, "both corpora render in one time zone"
    overlap = set(corpus["states"]) & set(user["states"])
    assert not overlap, f"the two corpora define the same entities, give the user corpus's other ids: {sorted(overlap)}"
    await set_time_zone(ws_call, zone)
    token_file = os.path.join(work, "template-token")
    with open(token_file, "w") as f:
        f.write(token)
    os.chmod(token_file, 0o600)

    async def render(template):
        async with session.post(f"{ha.base}/api/template", json={"template": template}, headers=headers) as response:
            text = await response.text()
            if response.status == 200:
                return {"result": text}
            try:
                return {"error": json.loads(text).get("message", text)}
            except ValueError:
                return {"error": text}

    async def all_states():
        async with session.get(f"{ha.base}/api/states", headers=headers) as response:
            return await response.json()

    async def set_states(wanted):
        started = datetime.datetime.fromisoformat((await render("{{ now().isoformat() }}"))["result"])
        # Twice, a moment apart: an entity core also computes (the e2e configuration's template sensors) may render
        # itself once core has started, over the first write.
        for attempt in range(2):
            for entity_id, entry in wanted.items():
                body = {"state": str(resolve(entry["state"], started, zone)),
                        "attributes": resolve(entry.get("attributes", {}), started, zone)}
                async with session.post(f"{ha.base}/api/states/{entity_id}", json=body, headers=headers) as response:
                    assert response.status in (200, 201), f"setting {entity_id}: HTTP {response.status}"
            if attempt == 0:
                await asyncio.sleep(2)
        # The very states Home Assistant holds, last_changed included, in its order, are what LiveBridge reads.
        states = await all_states()
        states_file = os.path.join(work, "template-states.json")
        with open(states_file, "w") as f:
            json.dump(states, f)
        return states, states_file

    async def render_all(templates, states_file):
        """Home Assistant's answers (by template), then LiveBridge's (in order), at the same now()."""
        now = (await render("{{ now().isoformat() }}"))["result"]
        home = {}
        for template in templates:
            if template not in home:
                home[template] = await render(template)
        requests = "".join(json.dumps({"id": i, "template": t}) + "\n" for i, t in enumerate(templates))
        # Templates only Home Assistant can render (its registries) are asked of it, as the daemon does.
        answer = subprocess.run([livebridge, "template", "--states", states_file, "--at", now, "--url", ha.base,
                                 "--token-file", token_file], input=requests,
                                capture_output=True, text=True, timeout=120, env={**os.environ, "TZ": zone})
        assert answer.returncode == 0, answer.stderr
        ours = {int(line["id"]): line for line in map(json.loads, answer.stdout.splitlines())}
        return now, home, [ours[i] for i in range(len(templates))]

    async def render_each(templates, states_file):
        """Like render_all, but each template rendered by LiveBridge at the moment Home Assistant rendered it (the
        middle of its request; core runs on this machine's clock): a template reading now() against a state set a
        few seconds ago (`relative_time(states.x.last_changed)`) is compared at the same second, not at the start of
        the run. Home Assistant's answers, the moments, LiveBridge's answers."""
        now = (await render("{{ now().isoformat() }}"))["result"]
        home, at = {}, {}
        for template in templates:
            if template not in home:
                before = time.time()
                home[template] = await render(template)
                middle = datetime.datetime.fromtimestamp((before + time.time()) / 2, zoneinfo.ZoneInfo(zone))
                at[template] = middle.isoformat()

        def one(template):
            request = json.dumps({"id": 0, "template": template}) + "\n"
            answer = subprocess.run([livebridge, "template", "--states", states_file, "--at", at[template], "--url", ha.base,
                                     "--token-file", token_file], input=request,
                                    capture_output=True, text=True, timeout=60, env={**os.environ, "TZ": zone})
            assert answer.returncode == 0, answer.stderr
            return json.loads(answer.stdout.splitlines()[0])

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            ours = list(pool.map(one, templates))
        return now, home, at, ours

    # docs/template-examples.yaml, on its own states, strictly.
    before = {s["entity_id"] for s in await all_states()}
    states, states_file = await set_states(corpus["states"])
    now, home, ours = await render_all([e["template"] for e in corpus["templates"]], states_file)
    same, known, problems = 0, 0, []
    for entry, mine in zip(corpus["templates"], ours):
        template, theirs = entry["template"], home[entry["template"]]
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
    log(f"templates: {same} of {total} the same as Home Assistant ({100 * same // total}%), {known} known differences")
    recorded = {"time_zone": zone, "now": now, "states": _portable(states), "results": home}

    # Tests/e2e/user-templates.yaml, on its own states: the examples' entities go first (their iteration order, and
    # what a template over all states sees, is theirs alone), those core made itself stay.
    for entity_id in sorted(set(corpus["states"]) - before):
        async with session.delete(f"{ha.base}/api/states/{entity_id}", headers=headers) as response:
            assert response.status in (200, 404), f"removing {entity_id}: HTTP {response.status}"
    states, states_file = await set_states(user["states"])
    now, home, at, ours = await render_each([e["template"] for e in user["templates"]], states_file)
    # All of Home Assistant's states, in its order: templates over all states (`states | count`) and its iteration
    # order (`states.light`) offline as they were here. `at`: the moment Home Assistant rendered each template.
    recorded["user"] = {"now": now, "states": states, "results": home, "at": at}
    with open(RESULTS, "w") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
        f.write("\n")
    score = user_score(user["templates"], home, ours)
    write_differences(score, now, zone)
    total = len(user["templates"])
    log(f"user templates: {score['same']} of {total} the same as Home Assistant ({100 * score['same'] // total}%), "
        f"{score['both_refuse']} of them refused by both, {score['home_assistant_only']} rendered by Home Assistant "
        f"(offline: no text), {len(score['differences'])} different: see {os.path.relpath(USER_DIFFERENCES, ROOT)}")
    assert not problems, "templates that differ from Home Assistant:\n  " + "\n  ".join(problems)


def user_score(entries, home, ours):
    """The user corpus measured: the same text (or both refuse), rendered by Home Assistant for LiveBridge, or a
    difference (template, source, both answers)."""
    score = {"same": 0, "both_refuse": 0, "home_assistant_only": 0, "differences": []}
    for entry, mine in zip(entries, ours):
        theirs = home[entry["template"]]
        if mine.get("error", "").startswith(RENDERED_BY_HOME_ASSISTANT):
            # Only offline: with --url Home Assistant renders it for LiveBridge, so this is not expected here.
            score["home_assistant_only"] += 1
        elif "result" in theirs and theirs["result"] == mine.get("result"):
            score["same"] += 1
        elif "error" in theirs and "error" in mine:
            score["same"] += 1
            score["both_refuse"] += 1
        else:
            score["differences"].append((entry, theirs, mine))
    return score


def write_differences(score, now, zone):
    with open(USER_DIFFERENCES, "w") as f:
        f.write(f"# Tests/e2e/user-templates.yaml: the templates LiveBridge renders differently from Home Assistant\n"
                f"# ({len(score['differences'])}), written by the e2e's template differential at now() = {now}, {zone}.\n")
        for entry, theirs, mine in score["differences"]:
            f.write("\n" + "-" * 100 + "\n")
            f.write(f"source: {entry['source']}\n")
            f.write("template:\n" + _indent(entry["template"]) + "\n")
            f.write("Home Assistant:\n" + _indent(_answer(theirs)) + "\n")
            f.write("LiveBridge:\n" + _indent(_answer(mine)) + "\n")


def _answer(answer):
    return answer["result"] if "result" in answer else f"(error) {answer.get('error')}"


def _indent(text):
    return "\n".join("    " + line for line in text.split("\n"))


def _portable(states):
    """The states of docs/template-examples.yaml's domains, as Home Assistant gave them: whole domains, in Home
    Assistant's order (templates iterate `states` in it), so that templates iterating one (`states.input_boolean`)
    see offline what they saw in Home Assistant."""
    domains = {entity_id.split(".")[0] for entity_id in load_corpus()["states"]}
    return [s for s in states if s["entity_id"].split(".")[0] in domains]
