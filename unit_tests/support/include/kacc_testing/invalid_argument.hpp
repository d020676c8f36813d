#pragma once
// The checks of kacc's argument errors, shared by the tests of every entry point: the call
// throws std::invalid_argument, and its message names the function (with its namespace)
// and the argument, as the entry points promise.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace kacc_testing {

/// Calls f and returns the message of the std::invalid_argument it throws, or "accepted"
/// when it throws none.
template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

/// Calls f and expects std::invalid_argument whose message contains `function` (e.g.
/// "kacc::blas::gemv") and `what` (the argument, or the extents it was given).
template <class F>
void expect_invalid_argument(F&& f, const std::string& function, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no exception for " << what << " in " << function;
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(function), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

}  // namespace kacc_testing
