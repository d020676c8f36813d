#pragma once
/// @file
/// The device form of kacc::exact<double> sums (ExBLAS's GPU design): every thread keeps
/// a floating-point expansion of its products in registers (exact_expansion), and what an
/// expansion cannot hold goes, by atomic additions, to one set of exact<double>'s words
/// that all threads of a team share in scratch memory (exact_shared_words). A thread adds
/// its expansion's terms there once, at the end. A device thread cannot carry a whole
/// exact<double> (about 1 KiB) through a Kokkos reduction: that ran 126 times slower than
/// a plain fp64 DOT on an H200.

#include <kacc/core/exact_lanes.hpp>

namespace kacc {
namespace Impl {

/// exact<double>'s words and special-value flags in memory that many threads add to at
/// once (GPU team scratch, device memory): `word` points to `size` words, zero to begin
/// with. Word k holds multiples of 2^(lowest_exponent + 32 k), as exact<double>'s digit[k],
/// in two's complement (unsigned words: the 64-bit atomic addition GPUs have natively);
/// word `words` holds the special-value flags. Each word addition is below 2^33 in
/// magnitude, so 2^30 of them fit in any word.
struct exact_shared_words {
  /// One word.
  using word_type = unsigned long long;
  /// Words of the sum (exact<double>::words).
  static constexpr int words = exact<double>::words;
  /// Words in all: the sum's, then the flags.
  static constexpr int size = words + 1;
  /// The words.
  word_type* word;

  /// word[k] += d atomically (skipped when d is 0, which is common in a word's upper half).
  KOKKOS_INLINE_FUNCTION void operator()(int k, std::int64_t d) const {
    if (d != 0) Kokkos::atomic_add(&word[k], static_cast<word_type>(d));
  }

  /// Adds v exactly (or its special-value flag).
  KOKKOS_INLINE_FUNCTION void add_to_words(double v) const {
    if (!exact<double>::scatter(v, *this)) flag(exact<double>::special_flag(v));
  }

  /// Adds the product a b exactly (or its special-value flag).
  KOKKOS_INLINE_FUNCTION void add_product_to_words(double a, double b) const {
    if (!exact<double>::scatter_product(a, b, *this)) flag(exact<double>::special_flag(a * b));
  }

  /// Sets special-value flags.
  KOKKOS_INLINE_FUNCTION void flag(unsigned flags) const {
    Kokkos::atomic_fetch_or(&word[words], static_cast<word_type>(flags));
  }

  /// Adds word k of this sum to total (k in [0, size)): its low 32 bits to total's word k,
  /// the rest to word k + 1, so that each of total's word additions stays below 2^33
  /// however large this word has grown. The top word of a sum is never added to by
  /// scatter (finite values and products reach word 131 at most).
  KOKKOS_INLINE_FUNCTION void add_word_into(const exact_shared_words& total, int k) const {
    const std::int64_t d = static_cast<std::int64_t>(word[k]);
    if (k == words) {
      if (d != 0) total.flag(static_cast<unsigned>(d));
    } else if (k + 1 == words) {
      total(k, d);
    } else {
      total(k, d & 0xffffffff);
      total(k + 1, d >> 32);  // arithmetic shift: d = low + 2^32 floor(d / 2^32)
    }
  }

  /// The sum as an exact<double> (host code, on words in host memory).
  exact<double> value() const {
    exact<double> sum;
    for (int k = 0; k < words; ++k) sum.digit[k] = static_cast<std::int64_t>(word[k]);
    sum.special = static_cast<unsigned>(word[words]);
    sum.normalize();
    return sum;
  }
};

/// One thread's part of an exact sum of products: exact_lanes' expansions for one lane
/// (exact_lane_terms' terms), in registers; a remainder an expansion cannot hold, and a
/// product outside their range, goes to a Sink with add_to_words and add_product_to_words
/// (exact_shared_words). ExactProducts: every product added is exact in double.
template <bool ExactProducts>
struct exact_expansion : exact_lane_terms<ExactProducts> {
  using layout = exact_lane_terms<ExactProducts>;

  /// The terms: layout::product_terms of the rounded products, then layout::error_terms
  /// of their rounding errors.
  double term[layout::terms] = {};

  /// Adds a b exactly.
  template <class Sink>
  KOKKOS_INLINE_FUNCTION void add_product(double a, double b, const Sink& sink) {
    double p, e;
    if (!lanes_products<ExactProducts, 1>(&a, &b, &p, &e)) {
      sink.add_product_to_words(a, b);
      return;
    }
    if (lanes_cascade<layout::product_terms, 1>(term, &p)) sink.add_to_words(p);
    if constexpr (!ExactProducts) {
      if (lanes_cascade<layout::error_terms, 1>(term + layout::product_terms, &e)) {
        sink.add_to_words(e);
      }
    }
  }

  /// Adds the terms to sink (exactly) and leaves them zero.
  template <class Sink>
  KOKKOS_INLINE_FUNCTION void flush(const Sink& sink) {
    for (int t = 0; t < layout::terms; ++t) {
      if (term[t] != 0) sink.add_to_words(term[t]);
      term[t] = 0;
    }
  }
};

}  // namespace Impl
}  // namespace kacc
