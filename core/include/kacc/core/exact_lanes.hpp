#pragma once
/// @file
/// kacc::Impl::exact_lanes<W>: the host loop form of kacc::exact<double> for products taken W
/// at a time. W lanes of floating-point expansions side by side, one set for the rounded
/// products and one for their rounding errors, so each cascade of TwoSums is the same
/// branch-free operation on W doubles (it vectorises), and each lane's leading term carries
/// the loop's only dependency from one group of W products to the next. Products outside the
/// expansions' range, special values, and whatever an expansion cannot hold go to one
/// exact<double> on the side, as exact<double>::add_product would send them. Every step is
/// exact, so the sum is the same exact sum, however it is split.

#include <kacc/core/exact.hpp>
#include <kacc/core/pragma_simd.hpp>

namespace kacc {
namespace Impl {

/// Whether host loops accumulating in Acc with arithmetic T use exact_lanes.
template <class Acc, class T>
inline constexpr bool uses_exact_lanes_v =
    std::is_same<Acc, exact<double>>::value&& std::is_same<T, double>::value;

/// W lanes of exact sums of products of doubles (see the file comment). With Separate, the
/// lanes are W separate sums (W rows of a matrix-vector product), each with its own
/// long accumulator on the side; without, they are parts of one sum.
template <int W, bool Separate = false>
struct exact_lanes {
  /// Doubles per expansion of the rounded products: as exact<double>'s own.
  static constexpr int product_terms = exact<double>::expansion_terms;
  /// Doubles per expansion of the rounding errors: each error is below half an ulp of its
  /// product, so their sum spans fewer bits.
  static constexpr int error_terms = 2;

  /// Expansions of the rounded products, term-major so a term of all lanes is contiguous.
  double products[product_terms][W] = {};
  /// Expansions of the products' rounding errors.
  double errors[error_terms][W] = {};
  /// What the expansions do not take: one for all lanes, or one per lane when Separate.
  exact<double> rest[Separate ? W : 1];
  /// Whether anything went to rest (so add_into can leave it out).
  bool rest_used = false;

  /// Adds a[l] b[l] for l in [0, W) exactly.
  KOKKOS_INLINE_FUNCTION void add_products(const double* a, const double* b) {
    double p[W], e[W];
    int in_range = 0;
    for (int l = 0; l < W; ++l) {
      p[l] = a[l] * b[l];
      e[l] = math::fma(a[l], b[l], -p[l]);
      const double m = math::fabs(p[l]);
      // exact<double>::add_product's expansion range; an exact zero adds nothing anywhere.
      // Bitwise, not short-circuit, operators: no branch in the loop, so it vectorises.
      const bool representable =
          (m >= exact<double>::expansion_min_product) & (m <= exact<double>::expansion_max);
      const bool zero = (p[l] == 0) & ((a[l] == 0) | (b[l] == 0));
      in_range += representable | zero;
    }
    if (in_range != W) {
      for (int l = 0; l < W; ++l) rest[Separate ? l : 0].add_product(a[l], b[l]);
      rest_used = true;
      return;
    }
    cascade(products, p);
    cascade(errors, e);
  }

  /// Adds a product exactly (outside the groups of W: the end of a loop). One sum only.
  KOKKOS_INLINE_FUNCTION void add_product(double a, double b) {
    static_assert(!Separate, "kacc::Impl::exact_lanes: add_product needs a lane");
    rest[0].add_product(a, b);
    rest_used = true;
  }

  /// Adds every lane's sum to acc (exactly), after folding the lanes into lane 0 with
  /// the same cascades, so only lane 0's terms go through acc's scalar path. One sum only.
  KOKKOS_INLINE_FUNCTION void add_into(exact<double>& acc) {
    static_assert(!Separate, "kacc::Impl::exact_lanes: add_into sums one sum's lanes");
    fold(products);
    fold(errors);
    add_lane_into(0, acc);
  }

  /// Adds lane l's sum to acc (exactly): with Separate, the sum of lane l.
  KOKKOS_INLINE_FUNCTION void add_lane_into(int l, exact<double>& acc) const {
    for (int t = 0; t < product_terms; ++t) acc.add(products[t][l]);
    for (int t = 0; t < error_terms; ++t) acc.add(errors[t][l]);
    if (rest_used) acc += rest[Separate ? l : 0];
  }

 private:
  /// x[l] into the expansions by TwoSums, term by term; a nonzero remainder goes to rest.
  template <int Terms>
  KOKKOS_INLINE_FUNCTION void cascade(double (&expansion)[Terms][W], double* x) {
    for (int t = 0; t < Terms; ++t) {
      double* term = expansion[t];
      KACC_PRAGMA_SIMD
      for (int l = 0; l < W; ++l) {
        const double e = term[l], v = x[l];
        const double s = e + v, bb = s - e;
        term[l] = s;
        x[l] = (e - (s - bb)) + (v - bb);  // TwoSum: e + v = s + x[l] exactly
      }
    }
    // Any nonzero remainder, sign aside: an integer OR, which vectorises as a reduction.
    std::uint64_t spilled = 0;
    for (int l = 0; l < W; ++l) spilled |= kacc::bit_cast<std::uint64_t>(x[l]) << 1;
    if (spilled != 0) {
      for (int l = 0; l < W; ++l)
        if (x[l] != 0) rest[Separate ? l : 0].add_to_words(x[l]);
      rest_used = true;
    }
  }

  /// Adds lanes [w, 2w) into lanes [0, w), halving w down to 1, term by term through the
  /// cascades; lanes [1, W) are zero afterwards.
  template <int Terms>
  KOKKOS_INLINE_FUNCTION void fold(double (&expansion)[Terms][W]) {
    for (int w = W / 2; w > 0; w /= 2) {
      for (int t = 0; t < Terms; ++t) {
        double x[W];
        for (int l = 0; l < W; ++l) {
          x[l] = l < w ? expansion[t][l + w] : 0.0;
          if (l >= w && l < 2 * w) expansion[t][l] = 0;
        }
        cascade(expansion, x);
      }
    }
  }
};

}  // namespace Impl
}  // namespace kacc
