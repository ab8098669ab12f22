// cuSPARSE's generic sparse products on seeded random matrices, one step each, every result
// checked on the host: the cuSPARSE part of the outside corpus's held-out set
// (tests/fixtures/outside). Two matrix-vector products in CSR whose only difference is where each
// row's columns fall (at random across a 128 MiB vector, or in a band around the diagonal), and a
// product with a dense matrix of 16 columns.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cusparse.h>

#include "outside_check.cuh"

#define OUTSIDE_CUSPARSE(call) OUTSIDE_CHECK(call, CUSPARSE_STATUS_SUCCESS, cusparseGetErrorString)

namespace {

using outside::begin_step;
using outside::DeviceBuffer;
using outside::end_step;
using outside::expect;

class Handle {
 public:
  Handle() { OUTSIDE_CUSPARSE(cusparseCreate(&handle_)); }
  ~Handle() {
    if (cusparseDestroy(handle_) != CUSPARSE_STATUS_SUCCESS)
      std::fprintf(stderr, "cusparseDestroy failed\n");
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cusparseHandle_t get() const { return handle_; }

 private:
  cusparseHandle_t handle_ = nullptr;
};

// A CSR matrix on the host, its rows' columns sorted.
struct Csr {
  std::int64_t rows = 0, columns = 0;
  std::vector<std::int32_t> offsets, indices;
  std::vector<float> values;
};

// `per_row` columns a row: anywhere (random), or within `band` of the diagonal (band > 0).
Csr make_matrix(std::int64_t rows, std::int64_t columns, int per_row, std::int64_t band,
                std::uint64_t seed) {
  Csr m;
  m.rows = rows;
  m.columns = columns;
  outside::Random r(seed);
  m.offsets.reserve(rows + 1);
  m.offsets.push_back(0);
  std::vector<std::int32_t> row;
  for (std::int64_t i = 0; i < rows; ++i) {
    row.clear();
    for (int k = 0; k < per_row; ++k) {
      const std::int64_t c =
          band > 0 ? std::clamp<std::int64_t>(i * columns / rows - band + r.below(2 * band + 1), 0,
                                              columns - 1)
                   : r.below(static_cast<std::uint32_t>(columns));
      row.push_back(static_cast<std::int32_t>(c));
    }
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    m.indices.insert(m.indices.end(), row.begin(), row.end());
    m.offsets.push_back(static_cast<std::int32_t>(m.indices.size()));
  }
  m.values.resize(m.indices.size());
  for (auto& v : m.values) v = r.symmetric();
  return m;
}

// The device copy of a CSR matrix and its cuSPARSE descriptor.
class DeviceCsr {
 public:
  explicit DeviceCsr(const Csr& m) : offsets_(m.offsets), indices_(m.indices), values_(m.values) {
    OUTSIDE_CUSPARSE(cusparseCreateCsr(&descr_, m.rows, m.columns,
                                       static_cast<std::int64_t>(m.values.size()), offsets_.get(),
                                       indices_.get(), values_.get(), CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  }
  ~DeviceCsr() {
    if (cusparseDestroySpMat(descr_) != CUSPARSE_STATUS_SUCCESS)
      std::fprintf(stderr, "cusparseDestroySpMat failed\n");
  }
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;
  cusparseSpMatDescr_t get() const { return descr_; }

 private:
  DeviceBuffer<std::int32_t> offsets_, indices_;
  DeviceBuffer<float> values_;
  cusparseSpMatDescr_t descr_ = nullptr;
};

// y = A x, and y on the host in double: each row within 1e-5 of the sum of its terms' magnitudes.
void spmv(const char* step, const Csr& a, std::uint64_t seed) {
  const auto x = outside::random_floats(static_cast<std::size_t>(a.columns), seed);
  DeviceCsr matrix(a);
  DeviceBuffer<float> dx(x), dy(static_cast<std::size_t>(a.rows));
  Handle handle;
  cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  OUTSIDE_CUSPARSE(cusparseCreateDnVec(&vx, a.columns, dx.get(), CUDA_R_32F));
  OUTSIDE_CUSPARSE(cusparseCreateDnVec(&vy, a.rows, dy.get(), CUDA_R_32F));
  const float one = 1, zero = 0;
  std::size_t bytes = 0;
  OUTSIDE_CUSPARSE(cusparseSpMV_bufferSize(handle.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                           matrix.get(), vx, &zero, vy, CUDA_R_32F,
                                           CUSPARSE_SPMV_CSR_ALG1, &bytes));
  outside::TempStorage buffer(bytes);
  begin_step(step);
  OUTSIDE_CUSPARSE(cusparseSpMV(handle.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix.get(),
                                vx, &zero, vy, CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG1, buffer.get()));
  end_step();
  OUTSIDE_CUSPARSE(cusparseDestroyDnVec(vx));
  OUTSIDE_CUSPARSE(cusparseDestroyDnVec(vy));
  const auto y = dy.download();
  for (std::int64_t i = 0; i < a.rows; ++i) {
    double sum = 0, magnitude = 0;
    for (std::int32_t k = a.offsets[i]; k < a.offsets[i + 1]; ++k) {
      const double term = static_cast<double>(a.values[k]) * x[a.indices[k]];
      sum += term;
      magnitude += std::abs(term);
    }
    expect(std::abs(y[i] - sum) <= 1e-5 * magnitude + 1e-30, step, "a row of y differs");
  }
}

// 2^20 rows of 32 columns anywhere in 2^25: each row's loads of x land in sectors of their own.
void spmv_random() { spmv("spmv_random", make_matrix(1 << 20, 1 << 25, 32, 0, 31), 32); }

// 2^22 rows of 9 columns within 4 of the diagonal: neighbouring rows read the same sectors of x.
void spmv_banded() { spmv("spmv_banded", make_matrix(1 << 22, 1 << 22, 9, 4, 33), 34); }

// C = A B with B dense (2^20 x 16, column-major): 16 products that share A's reads.
void spmm_random() {
  const char* step = "spmm_random";
  constexpr std::int64_t kN = 16;
  const Csr a = make_matrix(1 << 20, 1 << 20, 16, 0, 35);
  const auto b = outside::random_floats(static_cast<std::size_t>(a.columns * kN), 36);
  DeviceCsr matrix(a);
  DeviceBuffer<float> db(b), dc(static_cast<std::size_t>(a.rows * kN));
  Handle handle;
  cusparseDnMatDescr_t mb = nullptr, mc = nullptr;
  OUTSIDE_CUSPARSE(
      cusparseCreateDnMat(&mb, a.columns, kN, a.columns, db.get(), CUDA_R_32F, CUSPARSE_ORDER_COL));
  OUTSIDE_CUSPARSE(
      cusparseCreateDnMat(&mc, a.rows, kN, a.rows, dc.get(), CUDA_R_32F, CUSPARSE_ORDER_COL));
  const float one = 1, zero = 0;
  std::size_t bytes = 0;
  OUTSIDE_CUSPARSE(cusparseSpMM_bufferSize(
      handle.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
      matrix.get(), mb, &zero, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
  outside::TempStorage buffer(bytes);
  begin_step(step);
  OUTSIDE_CUSPARSE(cusparseSpMM(handle.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix.get(), mb, &zero, mc,
                                CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buffer.get()));
  end_step();
  OUTSIDE_CUSPARSE(cusparseDestroyDnMat(mb));
  OUTSIDE_CUSPARSE(cusparseDestroyDnMat(mc));
  const auto c = dc.download();
  for (std::int64_t i = 0; i < a.rows; i += 997)  // every 997th row, all 16 columns
    for (std::int64_t j = 0; j < kN; ++j) {
      double sum = 0, magnitude = 0;
      for (std::int32_t k = a.offsets[i]; k < a.offsets[i + 1]; ++k) {
        const double term = static_cast<double>(a.values[k]) * b[j * a.columns + a.indices[k]];
        sum += term;
        magnitude += std::abs(term);
      }
      expect(std::abs(c[j * a.rows + i] - sum) <= 1e-5 * magnitude + 1e-30, step,
             "an element of C differs");
    }
}

}  // namespace

int main() {
  spmv_random();
  spmv_banded();
  spmm_random();
  std::printf("all steps passed\n");
  return 0;
}
