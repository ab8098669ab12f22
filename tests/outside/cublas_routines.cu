// cuBLAS routines on seeded random matrices and vectors, one step each, every result checked on
// the host: the cuBLAS part of the outside corpus (tests/fixtures/outside). The single-precision
// products run twice, in strict fp32 (CUBLAS_DEFAULT_MATH, the matmul lab's reference) and with
// TF32 tensor cores; the other steps are shapes whose bottleneck is not the arithmetic: a
// rank-16 update (the output's writes), many tiny products, a transpose and the level-1 and
// level-2 routines (one pass over memory). Matrices are column-major, as cuBLAS reads them.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>

#include "outside_check.cuh"

#define OUTSIDE_CUBLAS(call) OUTSIDE_CHECK(call, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)

namespace {

using outside::begin_step;
using outside::DeviceBuffer;
using outside::end_step;
using outside::expect;

class Handle {
 public:
  Handle() { OUTSIDE_CUBLAS(cublasCreate(&handle_)); }
  ~Handle() {
    const cublasStatus_t status = cublasDestroy(handle_);
    if (status != CUBLAS_STATUS_SUCCESS)
      std::fprintf(stderr, "cublasDestroy: %s\n", cublasGetStatusString(status));
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// A product's entry against the host's, in double. `tolerance` is relative to sum |a_ik b_kj|:
// fp32 accumulation stays far below 1e-5 of it, TF32's 10-bit mantissas below 1e-3; garbage, a
// wrong operand or a missing term does not.
bool entry_matches(const float* a, int lda, const float* b, int ldb, int k, int i, int j, float got,
                   double tolerance) {
  double exact = 0, magnitude = 0;
  for (int p = 0; p < k; ++p) {
    const double term = double(a[i + std::size_t(p) * lda]) * b[p + std::size_t(j) * ldb];
    exact += term;
    magnitude += std::fabs(term);
  }
  return std::fabs(got - exact) <= tolerance * magnitude;
}

// C = A B for square n x n matrices, with the handle's math mode as it is set.
void sgemm(const Handle& h, const char* step, int n, double tolerance, std::uint64_t seed) {
  const std::size_t elements = std::size_t(n) * n;
  const auto a = outside::random_floats(elements, seed);
  const auto b = outside::random_floats(elements, seed + 1);
  DeviceBuffer<float> da(a), db(b), dc(elements);
  const float one = 1, zero = 0;
  OUTSIDE_CUBLAS(cublasSgemm(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da.get(), n,
                             db.get(), n, &zero, dc.get(), n));
  end_step();
  const auto c = dc.download();
  outside::Random r(seed + 2);
  for (int s = 0; s < 64; ++s) {
    const int i = static_cast<int>(r.below(n)), j = static_cast<int>(r.below(n));
    expect(entry_matches(a.data(), n, b.data(), n, n, i, j, c[i + std::size_t(j) * n], tolerance),
           step, "an entry of C differs from the host's");
  }
}

void sgemm_fp32(const Handle& h) {
  begin_step("sgemm_fp32");
  OUTSIDE_CUBLAS(cublasSetMathMode(h.get(), CUBLAS_DEFAULT_MATH));
  sgemm(h, "sgemm_fp32", 4096, 1e-5, 21);
}

void sgemm_tf32(const Handle& h) {
  begin_step("sgemm_tf32");
  OUTSIDE_CUBLAS(cublasSetMathMode(h.get(), CUBLAS_TF32_TENSOR_OP_MATH));
  sgemm(h, "sgemm_tf32", 4096, 1e-3, 31);
  OUTSIDE_CUBLAS(cublasSetMathMode(h.get(), CUBLAS_DEFAULT_MATH));
}

// C (8192 x 8192) = A (8192 x 16) B (16 x 8192): 32 flops per output element, so the product
// takes the time its 256 MB of writes take.
void sgemm_rank16(const Handle& h) {
  const char* step = "sgemm_rank16";
  begin_step(step);
  const int n = 8192, k = 16;
  const auto a = outside::random_floats(std::size_t(n) * k, 41);
  const auto b = outside::random_floats(std::size_t(k) * n, 42);
  DeviceBuffer<float> da(a), db(b), dc(std::size_t(n) * n);
  const float one = 1, zero = 0;
  OUTSIDE_CUBLAS(cublasSgemm(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, k, &one, da.get(), n,
                             db.get(), k, &zero, dc.get(), n));
  end_step();
  outside::Random r(43);
  for (int s = 0; s < 256; ++s) {
    const int i = static_cast<int>(r.below(n)), j = static_cast<int>(r.below(n));
    expect(entry_matches(a.data(), n, b.data(), k, k, i, j, dc.download_one(i + std::size_t(j) * n),
                         1e-5),
           step, "an entry of C differs from the host's");
  }
}

// 8192 independent 64 x 64 products: too small each to fill the GPU alone.
void sgemm_batched_small(const Handle& h) {
  const char* step = "sgemm_batched_small";
  begin_step(step);
  const int n = 64, batch = 8192;
  const long long stride = static_cast<long long>(n) * n;
  const std::size_t elements = std::size_t(stride) * batch;
  const auto a = outside::random_floats(elements, 51);
  const auto b = outside::random_floats(elements, 52);
  DeviceBuffer<float> da(a), db(b), dc(elements);
  const float one = 1, zero = 0;
  OUTSIDE_CUBLAS(cublasSgemmStridedBatched(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                                           da.get(), n, stride, db.get(), n, stride, &zero,
                                           dc.get(), n, stride, batch));
  end_step();
  const auto c = dc.download();
  outside::Random r(53);
  for (int s = 0; s < 256; ++s) {
    const std::size_t m = r.below(batch) * std::size_t(stride);
    const int i = static_cast<int>(r.below(n)), j = static_cast<int>(r.below(n));
    expect(entry_matches(a.data() + m, n, b.data() + m, n, n, i, j, c[m + i + std::size_t(j) * n],
                         1e-5),
           step, "an entry of a product differs from the host's");
  }
}

// C = A^T through geam (alpha 1, beta 0, A standing in for the unread B): exact, so every element
// is compared.
void sgeam_transpose(const Handle& h) {
  const char* step = "sgeam_transpose";
  begin_step(step);
  const int n = 8192;
  const std::size_t elements = std::size_t(n) * n;
  const auto a = outside::random_floats(elements, 61);
  DeviceBuffer<float> da(a), dc(elements);
  const float one = 1, zero = 0;
  OUTSIDE_CUBLAS(cublasSgeam(h.get(), CUBLAS_OP_T, CUBLAS_OP_N, n, n, &one, da.get(), n, &zero,
                             da.get(), n, dc.get(), n));
  end_step();
  const auto c = dc.download();
  for (std::size_t j = 0; j < std::size_t(n); ++j)
    for (std::size_t i = 0; i < std::size_t(n); ++i)
      expect(c[i + j * n] == a[j + i * n], step, "C is not the transpose of A");
}

// y = op(A) x for an 8192 x 8192 matrix: op N reads A's columns, op T its rows as dot products.
void sgemv(const Handle& h, const char* step, cublasOperation_t op, std::uint64_t seed) {
  begin_step(step);
  const int n = 8192;
  const auto a = outside::random_floats(std::size_t(n) * n, seed);
  const auto x = outside::random_floats(n, seed + 1);
  DeviceBuffer<float> da(a), dx(x), dy(n);
  const float one = 1, zero = 0;
  OUTSIDE_CUBLAS(
      cublasSgemv(h.get(), op, n, n, &one, da.get(), n, dx.get(), 1, &zero, dy.get(), 1));
  end_step();
  const auto y = dy.download();
  for (int i = 0; i < n; i += 97) {
    double exact = 0, magnitude = 0;
    for (int p = 0; p < n; ++p) {
      const float element =
          op == CUBLAS_OP_N ? a[i + std::size_t(p) * n] : a[p + std::size_t(i) * n];
      exact += double(element) * x[p];
      magnitude += std::fabs(double(element) * x[p]);
    }
    expect(std::fabs(y[i] - exact) <= 1e-5 * magnitude, step, "an entry of y differs");
  }
}

void saxpy(const Handle& h) {
  const char* step = "saxpy";
  begin_step(step);
  const std::size_t n = std::size_t{1} << 26;
  const auto x = outside::random_floats(n, 71);
  const auto y = outside::random_floats(n, 72);
  DeviceBuffer<float> dx(x), dy(y);
  const float alpha = -0.625f;
  OUTSIDE_CUBLAS(cublasSaxpy(h.get(), static_cast<int>(n), &alpha, dx.get(), 1, dy.get(), 1));
  end_step();
  const auto got = dy.download();
  for (std::size_t i = 0; i < n; ++i)
    expect(std::fabs(got[i] - (double(alpha) * x[i] + y[i])) <= 1e-6, step,
           "differs from alpha*x + y");
}

void sdot(const Handle& h) {
  const char* step = "sdot";
  begin_step(step);
  const std::size_t n = std::size_t{1} << 26;
  const auto x = outside::random_floats(n, 81);
  const auto y = outside::random_floats(n, 82);
  DeviceBuffer<float> dx(x), dy(y);
  float got = 0;
  OUTSIDE_CUBLAS(cublasSdot(h.get(), static_cast<int>(n), dx.get(), 1, dy.get(), 1, &got));
  end_step();
  double exact = 0, magnitude = 0;
  for (std::size_t i = 0; i < n; ++i) {
    exact += double(x[i]) * y[i];
    magnitude += std::fabs(double(x[i]) * y[i]);
  }
  expect(std::fabs(got - exact) <= 1e-5 * magnitude, step, "differs from the host's dot product");
}

}  // namespace

int main() {
  Handle h;
  sgemm_fp32(h);
  sgemm_tf32(h);
  sgemm_rank16(h);
  sgemm_batched_small(h);
  sgeam_transpose(h);
  sgemv(h, "sgemv_n", CUBLAS_OP_N, 91);
  sgemv(h, "sgemv_t", CUBLAS_OP_T, 93);
  saxpy(h);
  sdot(h);
  std::printf("all steps passed\n");
  return 0;
}
