"""Checks kvtune --json output against schema/kvtune-output.schema.json.

    kvtune bench --preset defaults --dataset spork --budget 1G --json > out.json
    python3 schema/validate.py comparison out.json

The first argument names the output's kind (tune, comparison, report, ablation; `any`
for whichever fits). Needs the jsonschema package (pip install jsonschema).
"""

import json
import os
import sys

import jsonschema

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "kvtune-output.schema.json")) as f:
    schema = json.load(f)
kind, path = sys.argv[1], sys.argv[2]
if kind != "any":
    schema = {"$ref": f"#/$defs/{kind}", "$defs": schema["$defs"]}
with open(path) as f:
    output = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.validate(output, schema, cls=jsonschema.Draft202012Validator)
print(f"{path}: a valid kvtune {kind} output")
