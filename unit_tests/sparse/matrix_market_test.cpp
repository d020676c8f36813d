// Matrix Market reader and writer: the repository's real matrices (gzip-compressed),
// plain and compressed text read alike, every malformed-input case, corrupt and truncated
// gzip data, and a write/read round trip.
#include <gtest/gtest.h>
#include <zlib.h>
#include <kacc/sparse/csr_matrix.hpp>
#include <kacc/sparse/matrix_market.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "test_matrices.hpp"

namespace ks = kacc::sparse;

namespace {

std::string temp_path(const std::string& name, const char* suffix = ".mtx") {
  return ::testing::TempDir() + "kacc_mm_" + name + suffix;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream out(path, std::ios::binary);
  out << text;
  return path;
}

/// gzip-compressed `text` (one gzip member), made with zlib's own writer.
std::string gzip(const std::string& text) {
  const std::string scratch = temp_path("gzip_scratch", ".gz");
  gzFile f = gzopen(scratch.c_str(), "wb9");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  EXPECT_EQ(gzclose(f), Z_OK);
  std::ifstream in(scratch, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(scratch.c_str());
  return bytes;
}

std::string temp_gz_file(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name, ".mtx.gz");
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return path;
}

// Expects reading the file at `path` to fail at `line` with a message containing `what`.
void expect_error_at(const std::string& path, long long line, const std::string& what) {
  try {
    ks::read_matrix_market(path);
    ADD_FAILURE() << path << ": no exception";
  } catch (const ks::matrix_market_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.line(), line) << msg;
    EXPECT_NE(msg.find(path + ":" + std::to_string(line) + ":"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << "'" << msg << "' lacks '" << what << "'";
  }
  std::remove(path.c_str());
}

// Expects reading `text` to fail at `line` with a message containing `what`, from a plain
// file and from the same text gzip-compressed.
void expect_error(const std::string& name, const std::string& text, long long line,
                  const std::string& what) {
  SCOPED_TRACE(name);
  expect_error_at(temp_file(name, text), line, what);
  expect_error_at(temp_gz_file(name, gzip(text)), line, what);
}

void expect_same_matrix(const ks::CooMatrix& a, const ks::CooMatrix& b) {
  EXPECT_EQ(a.num_rows, b.num_rows);
  EXPECT_EQ(a.num_cols, b.num_cols);
  EXPECT_EQ(a.row, b.row);
  EXPECT_EQ(a.col, b.col);
  EXPECT_EQ(a.val, b.val);
}

const std::string banner = "%%MatrixMarket matrix coordinate real general\n";

}  // namespace

TEST(MatrixMarket, ReadsEveryRepositoryMatrix) {
  for (const auto& m : kacc_sparse_test::repository_matrices) {
    SCOPED_TRACE(m.file);
    const auto a = ks::read_matrix_market(kacc_sparse_test::matrix_path(m.file));
    EXPECT_EQ(a.num_rows, m.rows);
    EXPECT_EQ(a.num_cols, m.cols);
    EXPECT_EQ(static_cast<std::int64_t>(a.nnz()), m.nnz);
    for (std::size_t k = 1; k < a.nnz(); ++k) {
      ASSERT_TRUE(a.row[k - 1] < a.row[k] || (a.row[k - 1] == a.row[k] && a.col[k - 1] < a.col[k]));
    }
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(a.num_rows), 0);
    for (const auto i : a.row) ++lengths[static_cast<std::size_t>(i)];
    EXPECT_EQ(*std::min_element(lengths.begin(), lengths.end()), m.min_row_length);
    EXPECT_EQ(*std::max_element(lengths.begin(), lengths.end()), m.max_row_length);
    const auto csr = ks::make_csr<double>(a);
    EXPECT_EQ(csr.nnz(), a.nnz());
    EXPECT_EQ(csr.num_rows(), m.rows);
    EXPECT_EQ(csr.row_stats().max, static_cast<double>(m.max_row_length));
    EXPECT_EQ(csr.row_stats().mean, static_cast<double>(m.nnz) / static_cast<double>(m.rows));
  }
}

TEST(MatrixMarket, RepositoryFolderHoldsExactlyTheListedMatrices) {
  std::set<std::string> listed, found;
  for (const auto& m : kacc_sparse_test::repository_matrices) listed.insert(m.file);
  for (const auto& entry : std::filesystem::directory_iterator(kacc_sparse_test::matrix_dir())) {
    const std::string name = entry.path().filename().string();
    if (name != "README.md") found.insert(name);
  }
  EXPECT_EQ(found, listed) << "sparse/data/matrices and test_matrices.hpp disagree";
}

TEST(MatrixMarket, GzipAndPlainTextReadAlike) {
  const std::string text =
      "%%MatrixMarket matrix coordinate real symmetric\n% comment\n4 4 5\n1 1 .5\n"
      "2 1 -1e-3\n3 3 7\n4 2 2.25\n4 4 -0";  // no newline after the last entry
  const auto plain = ks::read_matrix_market(temp_file("alike", text));
  ASSERT_EQ(plain.nnz(), 7u);
  expect_same_matrix(ks::read_matrix_market(temp_gz_file("alike", gzip(text))), plain);
  // Several gzip members one after the other (as `cat a.gz b.gz` makes) are one text.
  const std::size_t cut = text.size() / 2;
  expect_same_matrix(ks::read_matrix_market(temp_gz_file(
                         "members", gzip(text.substr(0, cut)) + gzip(text.substr(cut)))),
                     plain);
  // The reader looks at the bytes, not the name: gzip data under a plain name is read too.
  const std::string renamed = temp_path("gzip_named_plain");
  {
    std::ofstream out(renamed, std::ios::binary);
    out << gzip(text);
  }
  expect_same_matrix(ks::read_matrix_market(renamed), plain);
  std::remove(renamed.c_str());
  // A repository matrix: the compressed file against its text decompressed by zlib.
  const std::string gz = kacc_sparse_test::matrix_path("west0479.mtx.gz");
  gzFile f = gzopen(gz.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string decompressed;
  char buffer[4096];
  for (int n; (n = gzread(f, buffer, sizeof buffer)) > 0;) decompressed.append(buffer, n);
  gzclose(f);
  expect_same_matrix(ks::read_matrix_market(temp_file("west_plain", decompressed)),
                     ks::read_matrix_market(gz));
}

TEST(MatrixMarket, CorruptOrTruncatedGzipNamesFileAndLine) {
  std::string text = banner + "100 100 100\n";
  for (int k = 1; k <= 100; ++k)
    text +=
        std::to_string(k) + " " + std::to_string(101 - k) + " " + std::to_string(k * 0.1) + "\n";
  const std::string bytes = gzip(text);
  ASSERT_GT(bytes.size(), 40u);
  // Damage found while decompressing is reported at the line being read then, which for
  // a small file can be the first (zlib checks the trailer as soon as it reaches it).
  auto expect_damage = [](const std::string& name, const std::string& damaged,
                          const std::string& what) {
    SCOPED_TRACE(name);
    const std::string path = temp_gz_file(name, damaged);
    try {
      ks::read_matrix_market(path);
      ADD_FAILURE() << "no exception";
    } catch (const ks::matrix_market_error& e) {
      EXPECT_GE(e.line(), 1);
      EXPECT_NE(std::string(e.what()).find(path + ":" + std::to_string(e.line()) + ":"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
    std::remove(path.c_str());
  };
  // Cut short: inside the deflate data and inside the 8-byte trailer (CRC-32, length).
  expect_damage("cut_in_data", bytes.substr(0, bytes.size() / 2), "truncated gzip file");
  expect_damage("cut_in_trailer", bytes.substr(0, bytes.size() - 3), "truncated gzip file");
  // A changed bit in the trailer's CRC-32: the data inflate, the check fails.
  std::string bad_crc = bytes;
  bad_crc[bytes.size() - 8] = static_cast<char>(bad_crc[bytes.size() - 8] ^ 0x01);
  expect_damage("bad_crc", bad_crc, "corrupt gzip data (zlib: incorrect data check)");
  // A changed byte in the header's compression method (8 = deflate).
  std::string bad_method = bytes;
  bad_method[2] = 9;
  expect_error_at(temp_gz_file("bad_method", bad_method), 1, "corrupt gzip data");
  // Bytes after the last member that are not another member.
  expect_error_at(temp_gz_file("trailing", bytes + "trailing bytes"), 103, "corrupt gzip data");
  // Too short to hold a header, and a .gz name on plain text.
  expect_error_at(temp_gz_file("empty_gz", ""), 0, "not a gzip file");
  expect_error_at(temp_gz_file("one_byte", bytes.substr(0, 1)), 0, "not a gzip file");
  expect_error_at(temp_gz_file("plain_text", text), 0, "not a gzip file");
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

TEST(MatrixMarket, RepositoryMatrixRoundTrip) {
  const auto a = ks::read_matrix_market(kacc_sparse_test::matrix_path("west0479.mtx.gz"));
  const std::string path = ::testing::TempDir() + "kacc_mm_west.mtx";
  ks::write_matrix_market(path, ks::make_csr<double>(a));
  const auto b = ks::read_matrix_market(path);
  EXPECT_EQ(b.row, a.row);
  EXPECT_EQ(b.col, a.col);
  EXPECT_EQ(b.val, a.val);
  std::remove(path.c_str());
}
