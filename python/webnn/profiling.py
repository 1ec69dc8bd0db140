"""Readable reports of a compiled graph: its plan (``MLGraph.describe_plan()``) and where its
dispatches spend their time (``MLGraph.set_profiling(True)``, then ``MLGraph.profile()``).

    graph.set_profiling(True)
    for _ in range(20):
        graph.compute(inputs)
    print(webnn.profiling.format_profile(graph))
"""
from collections import defaultdict


def _shape(descriptor):
    return "x".join(str(d) for d in descriptor["shape"]) or "scalar"


def step_name(step):
    """``conv2d+add+relu``: the step's op joined to the ops fused into it."""
    return "+".join([step["op"], *step["fused"]])


def format_plan(graph):
    """The plan as text: one line per step (op, fused ops, output shapes, label), then the
    compiler passes, the arena and the constants kept."""
    plan = graph.describe_plan()
    lines = [f"{len(plan['steps'])} steps"]
    for index, step in enumerate(plan["steps"]):
        outputs = ", ".join(f"{d['dataType']}[{_shape(d)}]" for d in step["outputs"])
        kind = " (view)" if step["view"] else ""
        label = f"  '{step['label']}'" if step["label"] else ""
        lines.append(f"{index:5d}  {step_name(step):28s} -> {outputs}{kind}{label}")
    lines.append("passes:")
    lines.extend(f"  {name:17s} {summary}" for name, summary in plan["passes"])
    lines.append(f"arena: {plan['arena_bytes'] / 2**20:.2f} MiB, raw constants kept: "
                 f"{plan['constant_bytes'] / 2**20:.2f} MiB")
    return "\n".join(lines)


def profile_rows(graph):
    """``(by_kind, by_step, runs)``: mean ms per run summed per step kind (``conv2d+relu``) and per
    step, each sorted slowest first."""
    plan = graph.describe_plan()
    profile = graph.profile()
    runs = max(profile["runs"], 1)
    by_kind = defaultdict(lambda: [0.0, 0])
    by_step = []
    for index, total_ms in profile["steps"]:
        step = plan["steps"][index]
        if step["view"]:
            continue
        name = step_name(step)
        by_kind[name][0] += total_ms / runs
        by_kind[name][1] += 1
        by_step.append((total_ms / runs, index, name, step))
    kinds = sorted(((ms, name, count) for name, (ms, count) in by_kind.items()), reverse=True)
    by_step.sort(key=lambda row: -row[0])
    return kinds, by_step, profile["runs"]


def format_profile(graph, top=15):
    """Time per step kind and the slowest steps, as text (mean ms per profiled run)."""
    kinds, steps, runs = profile_rows(graph)
    if not runs:
        return "no profiled runs (call graph.set_profiling(True), then dispatch)"
    total = sum(ms for ms, _, _ in kinds) or 1.0
    lines = [f"profile of {runs} run(s): {total:.3f} ms per run in kernels", "by op kind:"]
    for ms, name, count in kinds[:top]:
        lines.append(f"  {name:28s} {ms:9.3f} ms {100 * ms / total:5.1f}%  ({count} steps)")
    lines.append("slowest steps:")
    for ms, index, name, step in steps[:top]:
        outputs = ", ".join(_shape(d) for d in step["outputs"])
        label = f"  '{step['label']}'" if step["label"] else ""
        lines.append(f"  #{index:<4d} {name:28s} {ms:9.3f} ms  -> {outputs}{label}")
    return "\n".join(lines)
