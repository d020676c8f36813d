#pragma once
/// @file
/// Matrix Market (coordinate) reading and writing on the host, in double.
///
/// read_matrix_market(path) returns a CooMatrix sorted by (row, column), 0-based, with
/// symmetric and skew-symmetric files expanded to the full matrix and duplicate entries
/// SUMMED (explicitly stored zeros are kept: they are stored entries). Fields real, integer
/// and pattern (every entry 1); complex, hermitian and array files are refused as
/// "unsupported". Every malformed file raises kacc::sparse::matrix_market_error naming the
/// file and the 1-based line. The reader is written for hostile input: memory reserved
/// from the declared entry count is capped by what the file's size can hold, numbers are
/// parsed with std::from_chars (locale independent, no overflow), no loop runs on a
/// declared count without consuming input.
///
/// gzip-compressed files (`name.mtx.gz`, recognised by the gzip magic bytes) are read
/// directly when KACC_ENABLE_ZLIB is defined and zlib is linked: the CMake target
/// kacc::kacc does both unless kacc was configured with -DKACC_ENABLE_ZLIB=OFF. Line
/// numbers then count lines of the decompressed text; corrupt or truncated compressed
/// data raises matrix_market_error at the line being read.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(KACC_ENABLE_ZLIB)
#include <zlib.h>
#endif

namespace kacc {
namespace sparse {

/// A host matrix in coordinate form, 0-based; the interchange type of the Matrix Market
/// reader and writer.
struct CooMatrix {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::vector<std::int64_t> row, col;
  std::vector<double> val;
  std::size_t nnz() const { return val.size(); }
};

/// A malformed Matrix Market file: what() names the file and line.
class matrix_market_error : public std::runtime_error {
 public:
  matrix_market_error(const std::string& file, long long line, const std::string& what)
      : std::runtime_error("kacc::sparse::read_matrix_market: " + file + ":" +
                           std::to_string(line) + ": " + what),
        file_(file),
        line_(line) {}
  const std::string& file() const { return file_; }
  long long line() const { return line_; }

 private:
  std::string file_;
  long long line_;
};

namespace detail {

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/// Splits a line at blanks; at most max_tokens + 1 tokens are kept (the extra one tells
/// "too many").
inline std::size_t split(const std::string& line, std::string_view* tokens,
                         std::size_t max_tokens) {
  std::size_t n = 0, i = 0;
  while (i < line.size() && n <= max_tokens) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    std::size_t j = i;
    while (j < line.size() && !is_space(line[j])) ++j;
    tokens[n++] = std::string_view(line.data() + i, j - i);
    i = j;
  }
  return n;
}

inline bool parse_int(std::string_view t, std::int64_t& v) {
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

/// Decimal real in C syntax, also ".9", "-.0365", "1.1e-16"; rejects hex and garbage.
inline bool parse_real(std::string_view t, double& v) {
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  if (t.empty() || t[0] == '+') return false;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

inline bool blank_or_comment(const std::string& line) {
  for (char c : line) {
    if (c == '%') return true;
    if (!is_space(c)) return false;
  }
  return true;
}

/// The lines of a Matrix Market file, plain text or gzip-compressed. A file is read as
/// gzip when it starts with the gzip magic bytes 1f 8b; a name ending in ".gz" without
/// them is refused, so a damaged header is reported as such rather than as a bad banner.
/// Errors are matrix_market_error at the line being read.
class line_reader {
 public:
  explicit line_reader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw matrix_market_error(path_, 0, "cannot open the file");
    in_.seekg(0, std::ios::end);
    file_size_ = static_cast<std::uint64_t>(std::max<std::streamoff>(0, in_.tellg()));
    in_.seekg(0, std::ios::beg);
    const int first = in_.get(), second = first == EOF ? EOF : in_.peek();
    in_.clear();
    in_.seekg(0, std::ios::beg);
    compressed_ = first == 0x1f && second == 0x8b;
    const bool gz_name = path_.size() >= 3 && lower(path_.substr(path_.size() - 3)) == ".gz";
    if (gz_name && !compressed_) {
      throw matrix_market_error(path_, 0,
                                "not a gzip file, or one cut short in its header: the name "
                                "ends in .gz but the file does not start with the gzip magic "
                                "bytes 1f 8b");
    }
    if (compressed_) start_inflate();
  }

  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;
  ~line_reader() {
#if defined(KACC_ENABLE_ZLIB)
    if (compressed_) inflateEnd(&stream_);
#endif
  }

  /// The next line, without its '\n', into `line`; false at the end of the text.
  bool next(std::string& line) {
    const bool got = compressed_ ? next_compressed(line) : next_plain(line);
    if (got) ++lines_;
    return got;
  }

  /// An upper bound on the size of the text in bytes, whatever the file holds: deflate
  /// expands its input at most 1032-fold (zlib's documented limit), so a compressed file
  /// cannot hold more than 1032 times its own size.
  std::uint64_t max_text_bytes() const {
    return compressed_ ? file_size_ * 1032 : file_size_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw matrix_market_error(path_, lines_ + 1, what);
  }

  bool next_plain(std::string& line) {
    if (std::getline(in_, line)) return true;
    if (in_.bad()) fail("read error");
    return false;
  }

#if defined(KACC_ENABLE_ZLIB)
  void start_inflate() {
    stream_ = z_stream{};
    // 16 + MAX_WBITS: a gzip wrapper (header and CRC-32 trailer), nothing else.
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      throw matrix_market_error(path_, 0, "cannot start zlib decompression");
    }
  }

  bool next_compressed(std::string& line) {
    for (;;) {
      const std::size_t newline = text_.find('\n', text_pos_);
      if (newline != std::string::npos) {
        line.assign(text_, text_pos_, newline - text_pos_);
        text_pos_ = newline + 1;
        return true;
      }
      if (finished_) {
        if (text_pos_ == text_.size()) return false;
        line.assign(text_, text_pos_, std::string::npos);  // last line without '\n'
        text_pos_ = text_.size();
        return true;
      }
      text_.erase(0, text_pos_);
      text_pos_ = 0;
      inflate_more();
    }
  }

  /// Appends the next piece of decompressed text to text_, or sets finished_ at the end
  /// of the last gzip member (a file may hold several, as gzip allows).
  void inflate_more() {
    if (stream_.avail_in == 0) {
      in_.read(input_.data(), static_cast<std::streamsize>(input_.size()));
      if (in_.bad()) fail("read error");
      stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
      stream_.avail_in = static_cast<uInt>(in_.gcount());
      if (stream_.avail_in == 0) {
        fail("truncated gzip file: the compressed data ends before the end of the stream");
      }
    }
    // Decompress straight into the free end of text_.
    constexpr std::size_t piece = 1 << 16;
    const std::size_t kept = text_.size();
    text_.resize(kept + piece);
    stream_.next_out = reinterpret_cast<Bytef*>(&text_[kept]);
    stream_.avail_out = static_cast<uInt>(piece);
    const int status = inflate(&stream_, Z_NO_FLUSH);
    text_.resize(kept + piece - stream_.avail_out);
    if (status == Z_STREAM_END) {
      const bool more_input =
          stream_.avail_in > 0 || in_.peek() != std::ifstream::traits_type::eof();
      if (more_input) {
        inflateReset(&stream_);
      } else {
        finished_ = true;
      }
    } else if (status == Z_MEM_ERROR) {
      fail("out of memory decompressing the gzip data");
    } else if (status != Z_OK && status != Z_BUF_ERROR) {
      // Z_DATA_ERROR (bad header, invalid deflate data, CRC or length mismatch) and
      // Z_NEED_DICT, which a gzip stream never legitimately asks for.
      fail(std::string("corrupt gzip data (zlib: ") + (stream_.msg ? stream_.msg : "data error") +
           ")");
    }
  }

  z_stream stream_{};
  std::vector<char> input_ = std::vector<char>(1 << 16);
  std::string text_;
  std::size_t text_pos_ = 0;
  bool finished_ = false;
#else
  [[noreturn]] void start_inflate() const {
    throw matrix_market_error(path_, 0,
                              "gzip-compressed file, but kacc was built without zlib "
                              "(configure kacc with -DKACC_ENABLE_ZLIB=ON, or define "
                              "KACC_ENABLE_ZLIB and link zlib)");
  }
  bool next_compressed(std::string&) {
    return false;
  }
#endif

  std::string path_;
  std::ifstream in_;
  std::uint64_t file_size_ = 0;
  bool compressed_ = false;
  long long lines_ = 0;
};

}  // namespace detail

/// Reads a Matrix Market coordinate file (see the file comment for the conventions).
inline CooMatrix read_matrix_market(const std::string& path) {
  detail::line_reader in(path);
  long long line_no = 0;
  std::string line;
  auto fail = [&](const std::string& what) { throw matrix_market_error(path, line_no, what); };

  // Banner.
  if (!in.next(line)) {
    line_no = 1;
    fail("empty file: expected the banner '%%MatrixMarket matrix coordinate <field> <symmetry>'");
  }
  ++line_no;
  std::string_view tok[8];
  std::size_t n = detail::split(line, tok, 5);
  if (n == 0 || detail::lower(std::string(tok[0])) != "%%matrixmarket") {
    fail("bad banner: the first line must start with %%MatrixMarket");
  }
  if (n != 5)
    fail("bad banner: expected 5 words, '%%MatrixMarket matrix coordinate <field> <symmetry>'");
  const std::string object = detail::lower(std::string(tok[1]));
  const std::string format = detail::lower(std::string(tok[2]));
  const std::string field = detail::lower(std::string(tok[3]));
  const std::string symmetry = detail::lower(std::string(tok[4]));
  if (object != "matrix") fail("unsupported object '" + std::string(tok[1]) + "' (only matrix)");
  if (format == "array") fail("unsupported format 'array' (only coordinate)");
  if (format != "coordinate") fail("bad banner: unknown format '" + std::string(tok[2]) + "'");
  if (field == "complex") fail("unsupported field 'complex' (real, integer, pattern)");
  if (field != "real" && field != "integer" && field != "pattern" && field != "double") {
    fail("bad banner: unknown field '" + std::string(tok[3]) + "'");
  }
  if (symmetry == "hermitian") fail("unsupported symmetry 'hermitian'");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric") {
    fail("bad banner: unknown symmetry '" + std::string(tok[4]) + "'");
  }
  const bool pattern = field == "pattern";
  const bool integer = field == "integer";
  const bool sym = symmetry == "symmetric";
  const bool skew = symmetry == "skew-symmetric";

  // Size line after comments and blank lines.
  bool have_size = false;
  while (in.next(line)) {
    ++line_no;
    if (detail::blank_or_comment(line)) continue;
    have_size = true;
    break;
  }
  if (!have_size) {
    ++line_no;
    fail("truncated file: missing the size line 'rows cols entries'");
  }
  n = detail::split(line, tok, 3);
  std::int64_t rows = 0, cols = 0, declared = 0;
  if (n != 3 || !detail::parse_int(tok[0], rows) || !detail::parse_int(tok[1], cols) ||
      !detail::parse_int(tok[2], declared)) {
    fail("bad size line: expected three integers 'rows cols entries'");
  }
  if (rows < 0 || cols < 0 || declared < 0) fail("bad size line: negative count");
  if ((sym || skew) && rows != cols)
    fail("bad size line: a " + symmetry + " matrix must be square");
  // Declared entries beyond what the matrix can hold are wrong counts.
  {
    const long double capacity =
        (sym || skew) ? (static_cast<long double>(rows) * (rows + 1)) / 2
                      : static_cast<long double>(rows) * static_cast<long double>(cols);
    if (static_cast<long double>(declared) > capacity) {
      fail("wrong counts: " + std::to_string(declared) + " entries declared for a " +
           std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    }
  }
  // Every entry line takes at least 4 bytes ("1 1\n"): never reserve more than that.
  const std::uint64_t reservable =
      std::min<std::uint64_t>(static_cast<std::uint64_t>(declared), in.max_text_bytes() / 4 + 1);
  CooMatrix m;
  m.num_rows = rows;
  m.num_cols = cols;
  const std::uint64_t factor = (sym || skew) ? 2 : 1;
  m.row.reserve(reservable * factor);
  m.col.reserve(reservable * factor);
  m.val.reserve(reservable * factor);

  const std::size_t expected_tokens = pattern ? 2 : 3;
  std::int64_t read = 0;
  while (in.next(line)) {
    ++line_no;
    if (detail::blank_or_comment(line)) continue;
    if (read == declared) {
      fail("wrong counts: more entries than the " + std::to_string(declared) + " declared");
    }
    n = detail::split(line, tok, expected_tokens);
    if (n != expected_tokens) {
      fail("bad entry: expected " + std::string(pattern ? "'row col'" : "'row col value'") +
           ", found " +
           (n > expected_tokens ? std::string("extra tokens") : std::to_string(n) + " token(s)"));
    }
    std::int64_t i = 0, j = 0;
    if (!detail::parse_int(tok[0], i) || !detail::parse_int(tok[1], j)) {
      fail("bad entry: row and column must be integers");
    }
    if (i < 1 || i > rows) {
      fail("row index " + std::string(tok[0]) + " out of range [1, " + std::to_string(rows) + "]");
    }
    if (j < 1 || j > cols) {
      fail("column index " + std::string(tok[1]) + " out of range [1, " + std::to_string(cols) +
           "]");
    }
    double v = 1;
    if (!pattern) {
      if (integer) {
        std::int64_t iv = 0;
        if (!detail::parse_int(tok[2], iv))
          fail("non-numeric integer value '" + std::string(tok[2]) + "'");
        v = static_cast<double>(iv);
      } else if (!detail::parse_real(tok[2], v)) {
        fail("non-numeric value '" + std::string(tok[2]) + "'");
      }
      if (!std::isfinite(v)) fail("non-finite value '" + std::string(tok[2]) + "'");
    }
    if (skew && i == j) fail("skew-symmetric matrix with a diagonal entry");
    m.row.push_back(i - 1);
    m.col.push_back(j - 1);
    m.val.push_back(v);
    if ((sym || skew) && i != j) {
      m.row.push_back(j - 1);
      m.col.push_back(i - 1);
      m.val.push_back(skew ? -v : v);
    }
    ++read;
  }
  if (read < declared) {
    ++line_no;
    fail("truncated file: " + std::to_string(declared) + " entries declared, " +
         std::to_string(read) + " found");
  }

  // Sort by (row, col) and sum duplicates.
  std::vector<std::size_t> order(m.val.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return m.row[a] != m.row[b] ? m.row[a] < m.row[b] : m.col[a] < m.col[b];
  });
  CooMatrix s;
  s.num_rows = rows;
  s.num_cols = cols;
  s.row.reserve(order.size());
  s.col.reserve(order.size());
  s.val.reserve(order.size());
  for (std::size_t k : order) {
    if (!s.val.empty() && s.row.back() == m.row[k] && s.col.back() == m.col[k]) {
      s.val.back() += m.val[k];
    } else {
      s.row.push_back(m.row[k]);
      s.col.push_back(m.col[k]);
      s.val.push_back(m.val[k]);
    }
  }
  return s;
}

/// Writes a CooMatrix as 'coordinate real general', 1-based, values to 17 digits.
inline void write_matrix_market(const std::string& path, const CooMatrix& a) {
  if (a.row.size() != a.val.size() || a.col.size() != a.val.size()) {
    throw std::invalid_argument(
        "kacc::sparse::write_matrix_market: row, col and val of A have "
        "different lengths");
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("kacc::sparse::write_matrix_market: cannot write " + path);
  std::fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% written by kacc\n");
  std::fprintf(f, "%lld %lld %lld\n", static_cast<long long>(a.num_rows),
               static_cast<long long>(a.num_cols), static_cast<long long>(a.val.size()));
  char number[64];
  for (std::size_t k = 0; k < a.val.size(); ++k) {
    // to_chars: shortest round-trip form, independent of the C locale.
    const auto r = std::to_chars(number, number + sizeof number - 1, a.val[k]);
    *r.ptr = '\0';
    std::fprintf(f, "%lld %lld %s\n", static_cast<long long>(a.row[k] + 1),
                 static_cast<long long>(a.col[k] + 1), number);
  }
  const bool ok = std::fflush(f) == 0;
  std::fclose(f);
  if (!ok) throw std::runtime_error("kacc::sparse::write_matrix_market: error writing " + path);
}

}  // namespace sparse
}  // namespace kacc
