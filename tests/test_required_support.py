"""The spec's required data types and ranks (spec PR #910: the "(required: ...)" sets in the op
tables) are all supported: read from ``../shared/spec/ops.tsv``, checked against
``op_support_limits()``, and every required (operand, data type) pair builds.

Skipped when the spec folder is absent (it is data beside the repository, like the WPT corpus).
"""
import csv
import os
import re
from pathlib import Path

import numpy as np
import pytest

import webnn
from test_op_support_limits import RECIPES, Case, outputs_of

OPS_TSV = Path(os.environ.get("WEBNN_SPEC_DIR", Path(__file__).resolve().parents[2] / "shared" / "spec")) / "ops.tsv"
pytestmark = pytest.mark.skipif(not OPS_TSV.is_file(), reason=f"spec table not found at {OPS_TSV}")


def _entries(column):
    """``name: text (required ...)`` entries of one table cell, split on top-level semicolons."""
    depth, start, out = 0, 0, []
    for i, ch in enumerate(column + ";"):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ";" and depth == 0:
            part = column[start:i].strip()
            start = i + 1
            if ":" in part:
                name, text = part.split(":", 1)
                out.append((name.strip(), text.strip()))
    return out


def _required_rows():
    rows = []
    with OPS_TSV.open(newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            types = {}
            for name, text in _entries(row["allowed_input_dataTypes"]):
                found = re.search(r"\(required: ([^)]*)\)", text)
                if found:
                    types[name] = [t.strip() for t in found.group(1).split(",")]
            ranks = {}
            for name, text in _entries(row["rank_constraints"]):
                found = re.search(r"\(required (\d+)(?: to (\d+))?\)", text)
                if found:
                    low = int(found.group(1))
                    ranks[name] = (low, int(found.group(2) or low))
            rows.append((row["op"], types, ranks))
    return rows


ROWS = _required_rows() if OPS_TSV.is_file() else []


def _member(limits, op, name):
    """The opSupportLimits member a table name refers to (``options.bias`` -> ``bias``,
    ``outputs[1] if ...`` -> ``outputs``/``output1``/``output``)."""
    name = name.removeprefix("options.")
    members = limits[op]
    index = re.search(r"\[(\d+)\]", name)
    base = re.sub(r"\[[^\]]*\]", "", name).split(" ")[0]  # "inputs[i]" -> "inputs"
    if base in members:
        return base
    if base.startswith("output"):
        for candidate in ("outputs", f"output{index.group(1) if index else 0}", "output"):
            if candidate in members:
                return candidate
    return None


@pytest.fixture(scope="module")
def limits(context):
    return context.op_support_limits()


def test_the_table_has_required_sets():
    assert len(ROWS) >= 95
    assert sum(bool(types) for _, types, _ in ROWS) >= 90


@pytest.mark.parametrize("op,types,ranks", ROWS, ids=[row[0] for row in ROWS])
def test_required_types_and_ranks_are_reported(limits, op, types, ranks):
    assert op in limits, f"{op} is missing from opSupportLimits()"
    for name, required in types.items():
        member = _member(limits, op, name)
        if member is None and name.startswith("outputDataType"):
            continue  # an option naming the output type, reported under output
        assert member is not None, f"{op}: no member for {name}"
        missing = set(required) - set(limits[op][member]["dataTypes"])
        assert not missing, f"{op}.{member}: required data types {sorted(missing)} unsupported"
    for name, (low, high) in ranks.items():
        member = _member(limits, op, name)
        assert member is not None, f"{op}: no member for {name}"
        reported = limits[op][member]["rankRange"]
        assert reported["min"] <= low and high <= reported["max"], (f"{op}.{member}: required ranks {low}..{high}, "
                                                                   f"supported {reported}")


@pytest.mark.parametrize("op,types,ranks", ROWS, ids=[row[0] for row in ROWS])
def test_every_required_type_builds_and_computes(context, limits, op, types, ranks):
    if op not in RECIPES:
        pytest.skip(f"no recipe for {op}")
    failures = []
    for name, required in types.items():
        member = _member(limits, op, name)
        if member is None or member.startswith("output"):
            continue
        for dtype in required:
            builder = webnn.MLGraphBuilder(context)
            case = Case(builder, op, limits[op], set_dtype={member: dtype})
            try:
                outputs = outputs_of(case.run())
            except TypeError as error:
                failures.append(f"{member}={dtype}: {error}")
                continue
            # It computes too (ones are valid for every operand: indices, scales, divisors).
            graph = builder.build({f"out{i}": out for i, out in enumerate(outputs)})
            feeds = {name: np.ones(desc["shape"], webnn.numpy_dtype(desc["dataType"]))
                     for name, desc in graph.input_descriptors.items()}
            results = graph.compute(feeds)
            for i, out in enumerate(outputs):
                assert results[f"out{i}"].dtype == webnn.numpy_dtype(out.data_type), f"{member}={dtype}: out{i}"
    assert not failures, failures
