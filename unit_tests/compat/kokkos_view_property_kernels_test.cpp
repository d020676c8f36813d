// kacc's kernels take Kokkos::View<T, kacc::StoredAs<F>> (where Kokkos has the View hooks,
// KACC_HAS_KOKKOS_VIEW_PROPERTY) and give bit for bit what they give for kacc::View of the
// same format: the traits see its format, and block loads read its 2-byte entries.
#include <kacc/core/kokkos_view_property.hpp>
#include <kacc/kacc.hpp>
#include <kacc/sparse.hpp>

#include <gtest/gtest.h>

#include <vector>

#if defined(KACC_HAS_KOKKOS_VIEW_PROPERTY)

namespace {

template <class F>
using PropertyVector = Kokkos::View<double*, kacc::StoredAs<F>>;
template <class F>
using PropertyMatrix = Kokkos::View<double**, Kokkos::LayoutLeft, kacc::StoredAs<F>>;

static_assert(kacc::is_view_v<PropertyVector<kacc::fp16>>, "a view to kacc");
static_assert(!kacc::is_kacc_view_v<PropertyVector<kacc::fp16>>, "not a kacc::View");
static_assert(std::is_same_v<kacc::format_t<PropertyVector<kacc::fp16>>, kacc::fp16>, "format");
static_assert(std::is_same_v<kacc::arithmetic_t<PropertyVector<kacc::bf16>>, double>, "arith");
static_assert(kacc::bytes_per_entry<PropertyVector<kacc::fp16>>() == 2, "2-byte entries");
static_assert(kacc::bytes_per_entry<PropertyMatrix<float>>() == 4, "4-byte entries");
static_assert(
    std::is_same_v<kacc::format_t<Kokkos::View<const double*, kacc::StoredAs<float>>>, float>,
    "const views too");

// v(i) = (i % 7 - 3) / 8 + i / 1024: a pattern whose fp16 and bf16 roundings differ.
double pattern(std::size_t i) {
  return (static_cast<int>(i % 7) - 3) / 8.0 + i / 1024.0;
}

// A kacc::View and a property View of format F holding the same pattern (rank 1 or 2).
template <class F>
std::pair<kacc::View<double*, kacc::StoredAs<F>>, PropertyVector<F>> vectors(std::size_t n,
                                                                             std::size_t seed) {
  Kokkos::View<double*> d("d", n);
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < n; ++i) h(i) = pattern(i + seed);
  Kokkos::deep_copy(d, h);
  kacc::View<double*, kacc::StoredAs<F>> k("k", n);
  kacc::deep_copy(k, d);
  PropertyVector<F> p("p", n);
  Kokkos::deep_copy(p, d);
  return {k, p};
}

template <class F>
std::pair<kacc::View<double**, Kokkos::LayoutLeft, kacc::StoredAs<F>>, PropertyMatrix<F>> matrices(
    std::size_t rows, std::size_t cols) {
  Kokkos::View<double**, Kokkos::LayoutLeft> d("d", rows, cols);
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) h(i, j) = pattern(i * cols + j);
  Kokkos::deep_copy(d, h);
  kacc::View<double**, Kokkos::LayoutLeft, kacc::StoredAs<F>> k("k", rows, cols);
  kacc::deep_copy(k, d);
  PropertyMatrix<F> p("p", rows, cols);
  Kokkos::deep_copy(p, d);
  return {k, p};
}

// The entries of a rank-1 view of either kind, as doubles on the host.
template <class V>
std::vector<double> host_values(const V& v) {
  Kokkos::View<double*> d("d", v.extent(0));
  if constexpr (kacc::is_kacc_view_v<V>) {
    kacc::deep_copy(d, v);
  } else {
    Kokkos::deep_copy(d, v);
  }
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

template <class F>
void same_results_as_kacc_view() {
  const std::size_t n = 1000, rows = 37, cols = 29;
  auto [kx, px] = vectors<F>(n, 0);
  auto [ky, py] = vectors<F>(n, 5);
  EXPECT_EQ(kacc::blas::dot(px, py), kacc::blas::dot(kx, ky));
  EXPECT_EQ(kacc::blas::dot(px, ky), kacc::blas::dot(kx, ky));  // the kinds mixed

  kacc::blas::axpy(0.75, kx, ky);
  kacc::blas::axpy(0.75, px, py);
  EXPECT_EQ(host_values(py), host_values(ky));

  auto [kA, pA] = matrices<F>(rows, cols);
  auto [kv, pv] = vectors<F>(cols, 3);
  auto [kw, pw] = vectors<F>(rows, 4);
  kacc::blas::gemv("N", 1.5, kA, kv, 0.5, kw);
  kacc::blas::gemv("N", 1.5, pA, pv, 0.5, pw);
  EXPECT_EQ(host_values(pw), host_values(kw));
  auto [kt, pt] = vectors<F>(cols, 6);
  kacc::blas::gemv("T", 1.0, kA, kw, 0.0, kt);
  kacc::blas::gemv("T", 1.0, pA, pw, 0.0, pt);
  EXPECT_EQ(host_values(pt), host_values(kt));

  // A 1-D Laplacian (tridiagonal -1 2 -1), values stored in F.
  kacc::sparse::CooMatrix coo;
  coo.num_rows = coo.num_cols = static_cast<std::int64_t>(n);
  for (std::int64_t i = 0; i < coo.num_rows; ++i) {
    for (std::int64_t j = i - 1; j <= i + 1; ++j) {
      if (j < 0 || j >= coo.num_cols) continue;
      coo.row.push_back(i);
      coo.col.push_back(j);
      coo.val.push_back(i == j ? 2.0 : -1.0);
    }
  }
  const auto a = kacc::sparse::make_csr<double, F>(coo);
  auto [kz, pz] = vectors<F>(n, 2);
  kacc::sparse::spmv("N", 1.0, a, kx, 0.25, kz);
  kacc::sparse::spmv("N", 1.0, a, px, 0.25, pz);
  EXPECT_EQ(host_values(pz), host_values(kz));
}

}  // namespace

TEST(KokkosViewPropertyKernels, Fp16SameAsKaccView) {
  same_results_as_kacc_view<kacc::fp16>();
}
TEST(KokkosViewPropertyKernels, Bf16SameAsKaccView) {
  same_results_as_kacc_view<kacc::bf16>();
}
TEST(KokkosViewPropertyKernels, FloatSameAsKaccView) {
  same_results_as_kacc_view<float>();
}

#endif
