"""kacc report: turns the CSV/JSON files the perf programs write into a report people read.

Used by scripts/kacc-report (generate) and scripts/kacc-compare (compare).
Standard library plus matplotlib only.
"""
