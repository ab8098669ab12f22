"""A variant's kernels as dicts, from either form a report holds them in (docs/report-schema.md):
`kernels`, one object per launch (a lab's; a program's before schema 4), or `launches`, a
program's function as columns over its launches (schema 4). The scripts that read profiled
programs' reports (profile_vs_ncu.py, replay_agreement.py) go through it."""


def kernels_of(variant):
    """The variant's kernels, one dict per launch, with the fields of a `kernels` entry (the
    diagnosis of a launch is its stored one)."""
    if "kernels" in variant:
        return variant["kernels"]
    columns = variant.get("launches")
    if not columns:
        return []
    count = columns["count"]
    apart = {"count", "diagnoses", "diagnosis_of", "sources"}

    def value(column, i):
        return column[i] if isinstance(column, list) else column

    out = []
    for i in range(count):
        kernel = {}
        for name, column in columns.items():
            if name in apart:
                continue
            if isinstance(column, dict):
                kernel[name] = {sub: value(c, i) for sub, c in column.items()
                                if value(c, i) is not None}
            elif value(column, i) is not None:
                kernel[name] = value(column, i)
        stored = columns.get("diagnosis_of", [None] * count)[i]
        if stored is not None:
            kernel["diagnosis"] = columns["diagnoses"][stored]
        out.append(kernel)
    return out
