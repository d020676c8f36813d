#pragma once
/// @file
/// kacc::solve::AdaptiveBlockJacobi: block-Jacobi whose inverted diagonal blocks are each
/// stored in the narrowest format that keeps that block accurate (adaptive-precision
/// block-Jacobi: Anzt, Dongarra, Flegar, Higham, Quintana-Ortí 2019; Ginkgo's
/// `precision_reduction::autodetect()`). Blocks are found and inverted as by
/// kacc::solve::BlockJacobi; applying it reads each stored entry once and computes in fp64.
///
/// Why the condition number decides: storing D_k^-1 with unit roundoff u perturbs it by a
/// Delta of ||Delta||_1 <= u ||D_k^-1||_1 (each entry by at most u relatively, within the
/// format's normal range), so the stored inverse E satisfies
/// ||E D_k - I||_1 = ||Delta D_k||_1 <= u kappa_1(D_k). Block k is stored in the first of
/// fp16 (u = 2^-11), bf16 (2^-8) and fp32 (2^-24) for which kappa_1(D_k) u < accuracy and
/// whose stored inverse is checked to keep ||Delta||_1 <= u ||D_k^-1||_1 (so neither an
/// overflow nor entries below the format's normal range that matter go unnoticed);
/// otherwise in fp64.

#include <kacc/solve/preconditioner/block_jacobi.hpp>

#include <array>
#include <cstdint>

namespace kacc {
namespace solve {

/// The format AdaptiveBlockJacobi stores one block in, narrowest first.
enum class block_format : std::uint8_t { fp16, bf16, fp32, fp64 };

/// "fp16", "bf16", "fp32" or "fp64".
inline const char* block_format_name(block_format f) {
  constexpr std::array<const char*, 4> names = {"fp16", "bf16", "fp32", "fp64"};
  return names[static_cast<std::size_t>(f)];
}

namespace Impl {

/// Whether Format stores the column-major s x s block E with an error Delta of
/// ||Delta||_1 <= u ||E||_1 (u its unit roundoff): false where an entry overflows, or where
/// entries below Format's normal range lose more than that (entries tiny next to their
/// block may round to zero).
template <class Format>
bool block_fits(const double* block, int s, double u) {
  double error = 0, norm = 0;
  for (int j = 0; j < s; ++j) {
    double column_error = 0, column_norm = 0;
    for (int i = 0; i < s; ++i) {
      const double v = block[j * s + i];
      column_error += std::fabs(convert<double>(convert<Format>(v)) - v);
      column_norm += std::fabs(v);
    }
    error = std::fmax(error, column_error);
    norm = std::fmax(norm, column_norm);
  }
  return error <= u * norm;
}

/// Whether Format, of unit roundoff u, keeps the inverted s x s block accurate.
template <class Format>
bool accurate_in(double condition, double accuracy, const double* block, int s, double u) {
  return condition * u < accuracy && block_fits<Format>(block, s, u);
}

/// The narrowest format whose unit roundoff u gives condition * u < accuracy and stores the
/// inverted s x s block (column-major) within u in the 1-norm; fp64 when none does.
inline block_format choose_block_format(double condition, double accuracy, const double* block,
                                        int s) {
  if (accurate_in<kacc::fp16>(condition, accuracy, block, s, std::ldexp(1.0, -11)))
    return block_format::fp16;
  if (accurate_in<kacc::bf16>(condition, accuracy, block, s, std::ldexp(1.0, -8)))
    return block_format::bf16;
  if (accurate_in<float>(condition, accuracy, block, s, std::ldexp(1.0, -24)))
    return block_format::fp32;
  return block_format::fp64;
}

}  // namespace Impl

/// z = D^-1 r for the block diagonal D of A, each inverted block stored in the narrowest
/// of fp16, bf16, fp32 and fp64 that keeps it accurate to `accuracy()` (see the file's
/// comment), read in fp64.
template <class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class AdaptiveBlockJacobi {
 public:
  using device_type = Device;
  using memory_space = typename Device::memory_space;
  using index_view = Kokkos::View<std::int64_t*, Device>;
  /// The blocks stored in one format, each column-major, one after the other.
  template <class Format>
  using blocks_type = kacc::View<double*, Device, kacc::StoredAs<Format>>;
  /// The same, read only.
  template <class Format>
  using const_blocks_type = kacc::View<const double*, Device, kacc::StoredAs<Format>>;

  /// Finds the blocks of the square CsrMatrix a (any value format; at most max_block_size
  /// rows each, 1 to 32), inverts them in fp64 and stores each in its format. Throws
  /// std::invalid_argument when a is not square, accuracy is not positive (or NaN),
  /// max_block_size is outside 1..32, or a block is singular (naming its rows).
  template <class A, class F, class O, class S, class D>
  explicit AdaptiveBlockJacobi(const sparse::CsrMatrix<A, F, O, S, D>& a, double accuracy = 0.1,
                               int max_block_size = 32)
      : accuracy_(accuracy) {
    static_assert(
        std::is_same<typename sparse::CsrMatrix<A, F, O, S, D>::memory_space, memory_space>::value,
        "kacc::solve::AdaptiveBlockJacobi: A must live in the preconditioner's memory space");
    if (a.num_rows() != a.num_cols())
      detail::fail("AdaptiveBlockJacobi", "A must be square; it is " +
                                              std::to_string(a.num_rows()) + " x " +
                                              std::to_string(a.num_cols()));
    if (!(accuracy > 0))
      detail::fail("AdaptiveBlockJacobi",
                   "accuracy = " + std::to_string(accuracy) + " must be positive");
    build(Impl::invert_diagonal_blocks(sparse::to_coo(a), max_block_size, "AdaptiveBlockJacobi"));
  }

  /// z = D^-1 r in fp64 for r of any format, in the loop shape of Exec's space (as
  /// BlockJacobi::apply). Throws std::invalid_argument when r or z does not have one entry
  /// per row of A.
  template <class Exec, class R, class Z>
  void apply(const Exec& exec, const R& r, const Z& z) const {
    apply_in_shape<kacc::Impl::default_shape_v<Exec>>(exec, r, z);
  }

  /// apply() in the given loop shape (host: a block per thread; team: a row per thread),
  /// whatever Exec's default; see block_jacobi.hpp's file comment for how the two round.
  template <kacc::Impl::shape Shape, class Exec, class R, class Z>
  void apply_in_shape(const Exec& exec, const R& r, const Z& z) const {
    Impl::check_block_apply<Exec>("AdaptiveBlockJacobi::apply", rows(), r, z);
    using ZV = typename Z::non_const_value_type;
    const const_blocks_type<kacc::fp16> half = fp16_;
    const const_blocks_type<kacc::bf16> brain = bf16_;
    const const_blocks_type<float> single = fp32_;
    const const_blocks_type<double> full = fp64_;
    const auto starts = starts_;
    const auto offsets = offsets_;
    const auto format_of = format_of_;
    const char* label = "kacc::solve::AdaptiveBlockJacobi::apply";
    if constexpr (Shape == kacc::Impl::shape::host) {
      Kokkos::parallel_for(
          label, kacc::Impl::range(exec, 0, blocks()), KOKKOS_LAMBDA(const index_type k) {
            const std::int64_t first = starts(k), s = starts(k + 1) - first;
            switch (static_cast<block_format>(format_of(k))) {
              case block_format::fp16:
                Impl::block_times(half, offsets(k), first, s, r, z);
                break;
              case block_format::bf16:
                Impl::block_times(brain, offsets(k), first, s, r, z);
                break;
              case block_format::fp32:
                Impl::block_times(single, offsets(k), first, s, r, z);
                break;
              default:
                Impl::block_times(full, offsets(k), first, s, r, z);
            }
          });
    } else {
      const auto block_of = block_of_;
      Kokkos::parallel_for(
          label, kacc::Impl::range(exec, 0, rows()), KOKKOS_LAMBDA(const index_type i) {
            const std::int64_t k = block_of(i);
            const std::int64_t first = starts(k), s = starts(k + 1) - first, row = i - first;
            double sum;
            switch (static_cast<block_format>(format_of(k))) {
              case block_format::fp16:
                sum = Impl::block_row_times(half, offsets(k), row, r, first, s);
                break;
              case block_format::bf16:
                sum = Impl::block_row_times(brain, offsets(k), row, r, first, s);
                break;
              case block_format::fp32:
                sum = Impl::block_row_times(single, offsets(k), row, r, first, s);
                break;
              default:
                sum = Impl::block_row_times(full, offsets(k), row, r, first, s);
            }
            z(i) = convert<ZV>(sum);
          });
    }
  }

  /// Rows of A.
  std::size_t rows() const { return block_of_.extent(0); }
  /// The number of diagonal blocks.
  std::size_t blocks() const { return conditions_.size(); }
  /// The accuracy the formats were chosen for.
  double accuracy() const { return accuracy_; }
  /// First row of each block, then the row count (blocks() + 1 entries, device).
  const index_view& block_starts() const { return starts_; }
  /// The 1-norm condition number of each diagonal block, computed in fp64 on the host.
  const std::vector<double>& block_conditions() const { return conditions_; }
  /// The format each block is stored in.
  const std::vector<block_format>& block_formats() const { return formats_; }
  /// How many blocks are stored in format f.
  std::size_t blocks_in(block_format f) const {
    return static_cast<std::size_t>(std::count(formats_.begin(), formats_.end(), f));
  }
  /// Bytes of the stored inverted blocks (the data apply() reads besides r).
  std::size_t bytes() const {
    return fp16_.extent(0) * 2 + bf16_.extent(0) * 2 + fp32_.extent(0) * 4 + fp64_.extent(0) * 8;
  }

 private:
  void build(const Impl::inverted_blocks& b) {
    const std::size_t count = b.conditions.size();
    formats_.resize(count);
    // Each block's entries go to the end of its format's array; offsets index that array.
    std::array<std::int64_t, 4> used{};
    std::vector<std::int64_t> offsets(count + 1, 0);
    std::vector<std::uint8_t> format_of(count);
    for (std::size_t k = 0; k < count; ++k) {
      const int s = static_cast<int>(b.starts[k + 1] - b.starts[k]);
      formats_[k] =
          Impl::choose_block_format(b.conditions[k], accuracy_, b.inverse.data() + b.offsets[k], s);
      const auto f = static_cast<std::size_t>(formats_[k]);
      format_of[k] = static_cast<std::uint8_t>(f);
      offsets[k] = used[f];
      used[f] += static_cast<std::int64_t>(s) * s;
    }
    fp16_ = gather<kacc::fp16>(b, block_format::fp16, used, offsets);
    bf16_ = gather<kacc::bf16>(b, block_format::bf16, used, offsets);
    fp32_ = gather<float>(b, block_format::fp32, used, offsets);
    fp64_ = gather<double>(b, block_format::fp64, used, offsets);
    starts_ = Impl::index_view_of<Device>("kacc::solve::AdaptiveBlockJacobi::starts", b.starts);
    offsets_ = Impl::index_view_of<Device>("kacc::solve::AdaptiveBlockJacobi::offsets", offsets);
    block_of_ =
        Impl::index_view_of<Device>("kacc::solve::AdaptiveBlockJacobi::block_of", b.block_of);
    format_of_ = Kokkos::View<std::uint8_t*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::solve::AdaptiveBlockJacobi::format"),
        count);
    Kokkos::deep_copy(
        format_of_, Kokkos::View<const std::uint8_t*, Kokkos::HostSpace>(format_of.data(), count));
    conditions_ = b.conditions;
  }

  /// The blocks stored in format f, copied from the fp64 inverses into one array of Format.
  template <class Format>
  blocks_type<Format> gather(const Impl::inverted_blocks& b, block_format f,
                             const std::array<std::int64_t, 4>& used,
                             const std::vector<std::int64_t>& offsets) const {
    Kokkos::View<double*, Kokkos::HostSpace> host(
        "kacc::solve::AdaptiveBlockJacobi::gather",
        static_cast<std::size_t>(used[static_cast<std::size_t>(f)]));
    for (std::size_t k = 0; k < formats_.size(); ++k) {
      if (formats_[k] != f) continue;
      const std::int64_t size = b.offsets[k + 1] - b.offsets[k];
      for (std::int64_t e = 0; e < size; ++e) host(offsets[k] + e) = b.inverse(b.offsets[k] + e);
    }
    blocks_type<Format> stored(
        Kokkos::view_alloc(
            Kokkos::WithoutInitializing,
            std::string("kacc::solve::AdaptiveBlockJacobi::") + block_format_name(f)),
        host.extent(0));
    kacc::deep_copy(stored, host);
    return stored;
  }

  double accuracy_;
  index_view starts_, offsets_, block_of_;
  Kokkos::View<std::uint8_t*, Device> format_of_;
  blocks_type<kacc::fp16> fp16_;
  blocks_type<kacc::bf16> bf16_;
  blocks_type<float> fp32_;
  blocks_type<double> fp64_;
  std::vector<double> conditions_;
  std::vector<block_format> formats_;
};

}  // namespace solve
}  // namespace kacc
