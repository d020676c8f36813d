"""Reading the perf programs' files, tolerant of what is missing or malformed."""
import csv
import json
import math
import os
import re

# Storage formats as the programs name them, plus common spellings.
_FORMAT_ALIASES = {
    "double": "fp64", "fp64": "fp64", "f64": "fp64", "float": "fp32", "fp32": "fp32",
    "f32": "fp32", "half": "fp16", "fp16": "fp16", "f16": "fp16", "bf16": "bf16",
    "bfloat16": "bf16",
}
_FORMAT_RE = re.compile(r"(fp64|fp32|fp16|bf16|bfloat16|f64|f32|f16|double|float|half|"
                        r"int\d+s?|scaled\w*|e\d+m\d+)", re.IGNORECASE)

# Implementations that are kacc itself; every other impl is a peer (OpenBLAS, Kokkos Kernels...).
_KACC_IMPLS = ("kacc",)


def read_csv(path):
    """Rows of a CSV file as dicts, or None when the file does not exist."""
    if not os.path.isfile(path):
        return None
    with open(path, newline="") as f:
        return [{k.strip(): (v or "").strip() for k, v in row.items() if k is not None}
                for row in csv.DictReader(f)]


def csv_header(path):
    with open(path, newline="") as f:
        return [h.strip() for h in next(csv.reader(f), [])]


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([r.get(h, "") if isinstance(r, dict) else r[i] for i, h in enumerate(header)])


def num(x):
    """Float of a CSV cell, or None for blanks, 'nan', text."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def median(values):
    """The median of the values that are not None (the mean of the middle two for an even
    count), or None when there are none."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def load_json(path):
    """A JSON file as a dict; tolerates bare unquoted values (e.g. a version 3.4.1) by quoting them.

    Returns (data, problem): problem is None when the file is valid JSON.
    """
    if not os.path.isfile(path):
        return None, "missing"
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text), None
    except ValueError as e:
        problem = "not valid JSON (%s)" % e
    fixed = re.sub(r'(:\s*)([^\s"\[\{][^,\n}]*?)(\s*[,\n}])',
                   lambda m: m.group(1) + _quote_bare(m.group(2)) + m.group(3), text)
    try:
        return json.loads(fixed), problem
    except ValueError:
        return None, problem


def _quote_bare(v):
    try:
        json.loads(v)
        return v
    except ValueError:
        return json.dumps(v)


def formats_of(config):
    """Format tokens in a config label, normalised: 'fp64<-fp16' -> ['fp64', 'fp16']."""
    out = []
    for tok in _FORMAT_RE.findall(config or ""):
        t = tok.lower()
        out.append(_FORMAT_ALIASES.get(t, t))
    return out


def storage_of(config):
    """The storage format of a config (its last format token; the config itself if none)."""
    f = formats_of(config)
    return f[-1] if f else (config or "?")


def is_pure(config, fmt):
    """True when every format named in config is fmt (e.g. 'fp64' or 'fp64/fp64')."""
    f = formats_of(config)
    return bool(f) and all(x == fmt for x in f)


def is_kacc(impl):
    return (impl or "kacc").lower().startswith(_KACC_IMPLS)


def geomean(values):
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def fmt_ratio(v, digits=2):
    return "NaN" if v is None else ("%.*f×" % (digits, v) if v < 100 else "%.3g×" % v)


def fmt_num(v, digits=3):
    if v is None:
        return "NaN"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        return "%.*e" % (digits - 1, v)
    return "%.*g" % (digits, v)
