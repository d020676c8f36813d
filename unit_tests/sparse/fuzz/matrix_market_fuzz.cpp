// libFuzzer target: any byte string given to the Matrix Market reader either parses or
// raises matrix_market_error; no crash, hang or unbounded allocation; a parsed matrix keeps
// the reader's guarantees (checked below). Inputs starting with the gzip magic bytes
// exercise the decompressing reader (built with KACC_ENABLE_ZLIB).
#include <kacc/sparse/matrix_market.hpp>

#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/kacc_mm_fuzz_" + std::to_string(getpid()) + ".mtx";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const auto a = kacc::sparse::read_matrix_market(path);
    // The reader's guarantees: sorted, in range, no duplicates, finite.
    for (std::size_t k = 0; k < a.nnz(); ++k) {
      if (a.row[k] < 0 || a.row[k] >= a.num_rows || a.col[k] < 0 || a.col[k] >= a.num_cols)
        __builtin_trap();
      if (k && !(a.row[k - 1] < a.row[k] || (a.row[k - 1] == a.row[k] && a.col[k - 1] < a.col[k])))
        __builtin_trap();
    }
  } catch (const kacc::sparse::matrix_market_error&) {
  }
  return 0;
}
