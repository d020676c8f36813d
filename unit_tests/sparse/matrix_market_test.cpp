// Matrix Market reader and writer: the shared real matrices, every malformed-input case,
// and a write/read round trip.
#include <gtest/gtest.h>
#include <kacc/sparse/csr_matrix.hpp>
#include <kacc/sparse/matrix_market.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "test_matrices.hpp"

namespace ks = kacc::sparse;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "kacc_mm_" + name + ".mtx";
  std::ofstream out(path, std::ios::binary);
  out << text;
  return path;
}

// Expects reading `text` to fail at `line` with a message containing `what`.
void expect_error(const std::string& name, const std::string& text, long long line,
                  const std::string& what) {
  const std::string path = temp_file(name, text);
  try {
    ks::read_matrix_market(path);
    ADD_FAILURE() << name << ": no exception";
  } catch (const ks::matrix_market_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.line(), line) << name << ": " << msg;
    EXPECT_NE(msg.find(path + ":" + std::to_string(line)), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos)
        << name << ": '" << msg << "' lacks '" << what << "'";
  }
  std::remove(path.c_str());
}

const std::string banner = "%%MatrixMarket matrix coordinate real general\n";

}  // namespace

TEST(MatrixMarket, ReadsAllSharedMatrices) {
  KACC_REQUIRE_MATRICES();
  for (const auto& m : kacc_sparse_test::shared_matrices) {
    SCOPED_TRACE(m.file);
    const auto a = ks::read_matrix_market(kacc_sparse_test::matrix_dir() + "/" + m.file);
    EXPECT_EQ(a.num_rows, m.rows);
    EXPECT_EQ(a.num_cols, m.cols);
    EXPECT_EQ(static_cast<std::int64_t>(a.nnz()), m.nnz);
    for (std::size_t k = 1; k < a.nnz(); ++k) {
      ASSERT_TRUE(a.row[k - 1] < a.row[k] || (a.row[k - 1] == a.row[k] && a.col[k - 1] < a.col[k]));
    }
    const auto csr = ks::make_csr<double>(a);
    EXPECT_EQ(csr.nnz(), a.nnz());
    EXPECT_EQ(csr.num_rows(), m.rows);
  }
}

TEST(MatrixMarket, ParsesNumberStylesAndExpandsSymmetry) {
  const auto path =
      temp_file("styles",
                "%%MatrixMarket matrix coordinate real symmetric\n% comment\n\n%another\n3 3 5\n"
                "1 1 .9\n2 1 -.0365\n3 1 1.1e-16\n3 3 +2.5E+2\n  3   2\t-0 \n");
  const auto a = ks::read_matrix_market(path);
  ASSERT_EQ(a.nnz(), 8u);  // 2 diagonal + 3 off-diagonal mirrored
  // Sorted: (0,0) (0,1) (0,2) (1,0) (1,2) (2,0) (2,1) (2,2)
  EXPECT_EQ(a.val[0], 0.9);
  EXPECT_EQ(a.val[1], -0.0365);
  EXPECT_EQ(a.val[2], 1.1e-16);
  EXPECT_EQ(a.val[3], -0.0365);
  EXPECT_EQ(a.val[7], 250.0);
  EXPECT_EQ(a.row[4], 1);
  EXPECT_EQ(a.col[4], 2);
}

TEST(MatrixMarket, SkewPatternIntegerDuplicatesEmptyRows) {
  auto skew = ks::read_matrix_market(
      temp_file("skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n3 1 2\n"));
  ASSERT_EQ(skew.nnz(), 2u);
  EXPECT_EQ(skew.row[0], 0);
  EXPECT_EQ(skew.col[0], 2);
  EXPECT_EQ(skew.val[0], -2.0);
  EXPECT_EQ(skew.val[1], 2.0);
  auto pat = ks::read_matrix_market(
      temp_file("pattern", "%%MatrixMarket matrix coordinate pattern general\n2 4 2\n1 4\n2 1\n"));
  ASSERT_EQ(pat.nnz(), 2u);
  EXPECT_EQ(pat.val[0], 1.0);
  EXPECT_EQ(pat.num_cols, 4);
  auto dup = ks::read_matrix_market(temp_file(
      "dup", "%%MatrixMarket matrix coordinate integer general\n5 2 3\n2 2 3\n2 2 -7\n5 1 1\n"));
  ASSERT_EQ(dup.nnz(), 2u);  // duplicates summed
  EXPECT_EQ(dup.val[0], -4.0);
  const auto csr = ks::make_csr<double>(dup);
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), csr.row_map());
  EXPECT_EQ(rm(0), 0);
  EXPECT_EQ(rm(1), 0);  // empty first row
  EXPECT_EQ(rm(5), 2);
  auto empty = ks::read_matrix_market(temp_file("empty", banner + "0 0 0\n"));
  EXPECT_EQ(empty.nnz(), 0u);
}

TEST(MatrixMarket, MalformedFilesNameFileAndLine) {
  expect_error("nobanner", "3 3 1\n1 1 1\n", 1, "bad banner");
  expect_error("emptyfile", "", 1, "empty file");
  expect_error("banner_words", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "bad banner");
  expect_error("array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1,
               "unsupported format 'array'");
  expect_error("complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1,
               "unsupported field 'complex'");
  expect_error("hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1,
               "unsupported");
  expect_error("field", "%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n", 1,
               "unknown field");
  expect_error("nosize", banner + "% only comments\n", 3, "missing the size line");
  expect_error("badsize", banner + "3 x 1\n", 2, "bad size line");
  expect_error("negsize", banner + "3 -3 1\n", 2, "negative");
  expect_error("toomany_declared", banner + "2 2 5\n1 1 1\n", 2, "wrong counts");
  expect_error("truncated", banner + "3 3 3\n1 1 1\n2 2 2\n", 5, "truncated");
  expect_error("extra_entries", banner + "3 3 1\n1 1 1\n2 2 2\n", 4, "more entries");
  expect_error("row_range", banner + "3 3 2\n1 1 1\n4 1 1\n", 4, "row index 4 out of range");
  expect_error("col_range", banner + "3 3 1\n1 0 1\n", 3, "column index 0 out of range");
  expect_error("nonnumeric", banner + "3 3 1\n1 1 abc\n", 3, "non-numeric value 'abc'");
  expect_error("trailing_junk", banner + "3 3 1\n1 1 1.5x\n", 3, "non-numeric");
  expect_error("bad_index", banner + "3 3 1\n1.5 1 1\n", 3, "must be integers");
  expect_error("inf", banner + "3 3 1\n1 1 inf\n", 3, "non-finite");
  expect_error("nan", banner + "3 3 1\n1 1 nan\n", 3, "non-finite");
  expect_error("overflow", banner + "3 3 1\n1 1 1e999\n", 3, "value");
  expect_error("missing_value", banner + "3 3 1\n1 1\n", 3, "bad entry");
  expect_error("extra_token", banner + "3 3 1\n1 1 1 1\n", 3, "extra tokens");
  expect_error("symmetric_rect", "%%MatrixMarket matrix coordinate real symmetric\n3 2 1\n1 1 1\n",
               2, "must be square");
  expect_error("huge_declared", banner + "100000000 100000000 9000000000000000\n1 1 1\n", 4,
               "truncated");
  expect_error("int_overflow", banner + "99999999999999999999999 3 1\n", 2, "bad size line");
}

TEST(MatrixMarket, MissingFileNamesIt) {
  try {
    ks::read_matrix_market("/nonexistent/kacc.mtx");
    FAIL();
  } catch (const ks::matrix_market_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kacc.mtx"), std::string::npos);
  }
}

TEST(MatrixMarket, WriteReadRoundTrip) {
  ks::CooMatrix a;
  a.num_rows = 4;
  a.num_cols = 6;
  a.row = {0, 0, 2, 3};
  a.col = {1, 5, 0, 3};
  a.val = {0.1, -1e-300, 3.0 / 7.0, 0.0};
  const auto csr = ks::make_csr<double, float>(a);
  const std::string path = ::testing::TempDir() + "kacc_mm_roundtrip.mtx";
  ks::write_matrix_market(path, a);
  auto b = ks::read_matrix_market(path);
  EXPECT_EQ(b.num_rows, 4);
  EXPECT_EQ(b.num_cols, 6);
  EXPECT_EQ(b.row, a.row);
  EXPECT_EQ(b.col, a.col);
  EXPECT_EQ(b.val, a.val);  // bit-exact: shortest round-trip digits
  // A stored-fp32 matrix writes its stored (rounded) values.
  ks::write_matrix_market(path, csr);
  b = ks::read_matrix_market(path);
  for (std::size_t k = 0; k < a.nnz(); ++k) EXPECT_EQ(b.val[k], double(float(a.val[k])));
  std::remove(path.c_str());
}

TEST(MatrixMarket, SharedMatrixRoundTrip) {
  KACC_REQUIRE_MATRICES();
  const auto a = ks::read_matrix_market(kacc_sparse_test::matrix_dir() + "/west0479.mtx");
  const std::string path = ::testing::TempDir() + "kacc_mm_west.mtx";
  ks::write_matrix_market(path, ks::make_csr<double>(a));
  const auto b = ks::read_matrix_market(path);
  EXPECT_EQ(b.row, a.row);
  EXPECT_EQ(b.col, a.col);
  EXPECT_EQ(b.val, a.val);
  std::remove(path.c_str());
}
