import json, os
from .kube import req


async def test_probe(backend):
    cases = json.load(open(os.environ.get("PROBE", "/tmp/28a/probe.json")))
    out = {}
    for case in cases:
        res = []
        for step in case["steps"]:
            path = step["path"].replace("{ns}", backend.namespace)
            r = await req(
                backend,
                step["method"],
                path,
                step.get("body"),
                content_type=step.get("ct", "application/json"),
            )
            body = r.body
            if isinstance(body, dict) and body.get("kind") == "Status":
                res.append(
                    [r.status, body.get("message"), (body.get("details") or {}).get("causes")]
                )
            else:
                res.append([r.status, None, None])
        out[case["id"]] = res
    json.dump(out, open(f"/tmp/28a/out_{backend.name}.json", "w"), indent=1)
