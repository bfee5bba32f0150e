"""docs/schema/: every scenario file under scenarios/ and every plan under experiments/
validates against the JSON Schema derived from the serde types (the schema test in
crates/quiclab-lab keeps the files current), and a file with an unknown or mistyped
key does not. Shared assumption lists (experiments/*/shared/) validate against the plan
schema's Assumption; link profiles (scenarios/links/) and host profiles
(scenarios/hosts/) have no schema of their own and are parsed by
crates/quiclab-sim/tests/sim/scenario_files.rs."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def validators(require) -> dict:
    """Schema file name -> its validator (the schema itself checked first)."""
    jsonschema = require("jsonschema")
    out = {}
    for name in ("scenario.schema.json", "plan.schema.json"):
        schema = json.loads((ROOT / "docs" / "schema" / name).read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        out[name] = jsonschema.Draft202012Validator(schema)
        if name == "plan.schema.json":
            shared = {
                "$defs": schema["$defs"],
                "type": "object",
                "properties": {
                    "assumptions": {"type": "array", "items": {"$ref": "#/$defs/Assumption"}}
                },
                "required": ["assumptions"],
                "additionalProperties": False,
            }
            out["assumptions"] = jsonschema.Draft202012Validator(shared)
    return out


def load(path: Path) -> dict:
    import tomllib

    return tomllib.loads(path.read_text())


def errors(v, doc) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]


FILES = [
    ("scenario.schema.json", p)
    for p in sorted((ROOT / "scenarios").rglob("*.toml"))
    if p.parent.name not in ("links", "hosts")
] + [
    ("assumptions" if p.parent.name == "shared" else "plan.schema.json", p)
    for p in sorted((ROOT / "experiments").rglob("*.toml"))
]


@pytest.mark.parametrize("schema,path", FILES, ids=[str(p.relative_to(ROOT)) for _, p in FILES])
def test_repository_file_validates(schema, path, validators):
    assert errors(validators[schema], load(path)) == []


def test_files_were_found():
    assert sum(s == "scenario.schema.json" for s, _ in FILES) >= 20
    assert sum(s == "plan.schema.json" for s, _ in FILES) >= 20


def test_unknown_and_mistyped_keys_fail(validators):
    scenario = validators["scenario.schema.json"]
    good = load(ROOT / "scenarios/examples/cubic_bulk.toml")
    assert errors(scenario, good) == []
    assert errors(scenario, {**good, "stpo": {"time_s": 1}})
    assert errors(scenario, {**good, "stop": {"time_s": "ten"}})
    plan = validators["plan.schema.json"]
    good = load(ROOT / "experiments/handshake-latency.toml")
    assert errors(plan, good) == []
    assert errors(plan, {**good, "repetitions": -1})
