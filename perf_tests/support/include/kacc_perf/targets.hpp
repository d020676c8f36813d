#pragma once
// The targets a perf program checks, each with its verdict: the rows of the program's
// <name>_summary.csv and the lines of the summary it prints.
#include <fmt/format.h>

#include <cmath>
#include <string>

namespace kacc_perf {

/// One target of an issue: `measured` must reach `bound` (at_least) or stay within it.
struct target {
  std::string check;  ///< what is measured, as the summary names it
  double measured;    ///< the figure; NaN or infinite where an input of it is missing
  double bound;       ///< the target's bound
  bool at_least;      ///< measured >= bound holds; otherwise measured <= bound holds
  std::string note;   ///< where the figure comes from
};

/// v as a CSV field: NaN where it is NaN, six significant digits otherwise.
inline std::string csv_number(double v) {
  return std::isnan(v) ? std::string("NaN") : fmt::format("{:.6g}", v);
}

/// Whether t's measurement is missing: a missing measurement never meets its target.
inline bool is_missing(const target& t) {
  return !std::isfinite(t.measured);
}

/// Whether t holds: its measurement is there and within its bound.
inline bool holds(const target& t) {
  return !is_missing(t) && (t.at_least ? t.measured >= t.bound : t.measured <= t.bound);
}

/// The summary CSV's header: the columns kacc-report reads.
inline constexpr const char* summary_csv_header = "check,measured,target,holds,note\n";

/// t as a row of a summary CSV: holds is yes, no or MISSING.
inline std::string summary_csv_row(const target& t) {
  return fmt::format("\"{}\",{},{}{:g},{},\"{}\"\n", t.check, csv_number(t.measured),
                     t.at_least ? ">=" : "<=", t.bound,
                     is_missing(t) ? "MISSING"
                     : holds(t)    ? "yes"
                                   : "no",
                     t.note);
}

/// Prints t as a line of a program's summary, its check name padded to check_width.
inline void print_target(const target& t, int check_width) {
  fmt::print("  {:<{}} {:9.4g}  target {}{:<6g} {}\n", t.check, check_width, t.measured,
             t.at_least ? ">=" : "<=", t.bound,
             is_missing(t) ? "MISSING"
             : holds(t)    ? "holds"
                           : "MISSED");
}

}  // namespace kacc_perf
