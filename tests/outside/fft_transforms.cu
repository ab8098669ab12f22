// cuFFT transforms on seeded random data, one step each, every result checked on the host: the
// cuFFT part of the outside corpus's held-out set (tests/fixtures/outside). A batched 1D complex
// transform of 2^20 points (cuFFT splits it into passes over 256 MiB) and a 2D real-to-complex
// transform of 4096 x 8192 floats. The checks compute a few output bins directly, in double.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cufft.h>

#include "outside_check.cuh"

#define OUTSIDE_CUFFT(call) OUTSIDE_CHECK(call, CUFFT_SUCCESS, outside::status_number)

namespace {

using outside::begin_step;
using outside::DeviceBuffer;
using outside::end_step;
using outside::expect;
using Complex = std::complex<double>;

constexpr double kPi = 3.14159265358979323846;

class Plan {
 public:
  Plan() = default;
  ~Plan() {
    if (plan_ != 0 && cufftDestroy(plan_) != CUFFT_SUCCESS) std::fprintf(stderr, "cufftDestroy\n");
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  cufftHandle* out() { return &plan_; }
  cufftHandle get() const { return plan_; }

 private:
  cufftHandle plan_ = 0;
};

// e^(-2 pi i k j / n), the angle reduced modulo n first so that it stays exact in double.
Complex twiddle(std::uint64_t k, std::uint64_t j, std::uint64_t n) {
  return std::polar(1.0, -2.0 * kPi * static_cast<double>((k * j) % n) / static_cast<double>(n));
}

// A float FFT's error grows with log2(n) times the rounding of each pass; against the sum of the
// inputs' magnitudes (the most any bin can hold) 1e-5 leaves room for that and none for a wrong
// bin, whose error is of the order of the bin itself (about sqrt(n) of the inputs' size).
void expect_bin(const char* step, Complex got, Complex expected, double magnitude) {
  expect(std::abs(got - expected) <= 1e-5 * magnitude, step, "an output bin differs from the DFT");
}

void fft_c2c_1d() {
  const char* step = "fft_c2c_1d";
  constexpr int kPoints = 1 << 20, kBatch = 32;
  const auto values = outside::random_floats(2ull * kPoints * kBatch, 11);
  begin_step(step);
  DeviceBuffer<float> data(values);  // interleaved real and imaginary parts
  Plan plan;
  OUTSIDE_CUFFT(cufftPlan1d(plan.out(), kPoints, CUFFT_C2C, kBatch));
  auto* signal = reinterpret_cast<cufftComplex*>(data.get());
  OUTSIDE_CUFFT(cufftExecC2C(plan.get(), signal, signal, CUFFT_FORWARD));
  end_step();
  const auto out = data.download();
  // Bins of the first and the last transform of the batch.
  for (const int batch : {0, kBatch - 1}) {
    const std::size_t base = 2ull * kPoints * batch;
    double magnitude = 0;
    for (int j = 0; j < kPoints; ++j)
      magnitude += std::abs(Complex(values[base + 2 * j], values[base + 2 * j + 1]));
    for (const std::uint64_t k : {0ull, 1ull, 12345ull, 1ull << 19, (1ull << 20) - 1}) {
      Complex expected = 0;
      for (std::uint64_t j = 0; j < kPoints; ++j)
        expected +=
            Complex(values[base + 2 * j], values[base + 2 * j + 1]) * twiddle(k, j, kPoints);
      expect_bin(step, Complex(out[base + 2 * k], out[base + 2 * k + 1]), expected, magnitude);
    }
  }
}

void fft_r2c_2d() {
  const char* step = "fft_r2c_2d";
  constexpr int kRows = 4096, kColumns = 8192, kHalf = kColumns / 2 + 1;
  const auto values = outside::random_floats(std::size_t{kRows} * kColumns, 12);
  begin_step(step);
  DeviceBuffer<float> in(values);
  DeviceBuffer<float> out(2ull * kRows * kHalf);
  Plan plan;
  OUTSIDE_CUFFT(cufftPlan2d(plan.out(), kRows, kColumns, CUFFT_R2C));
  OUTSIDE_CUFFT(cufftExecR2C(plan.get(), in.get(), reinterpret_cast<cufftComplex*>(out.get())));
  end_step();
  const auto result = out.download();
  double magnitude = 0;
  for (const float v : values) magnitude += std::abs(v);
  for (const auto& [k1, k2] : {std::pair<std::uint64_t, std::uint64_t>{0, 0},
                               {1, 3},
                               {100, 200},
                               {kRows - 1, kHalf - 1}}) {
    std::vector<Complex> across(kColumns);  // the row twiddles, shared by every row
    for (std::uint64_t j2 = 0; j2 < kColumns; ++j2) across[j2] = twiddle(k2, j2, kColumns);
    Complex expected = 0;
    for (std::uint64_t j1 = 0; j1 < kRows; ++j1) {
      Complex row = 0;
      for (std::uint64_t j2 = 0; j2 < kColumns; ++j2)
        row += static_cast<double>(values[j1 * kColumns + j2]) * across[j2];
      expected += row * twiddle(k1, j1, kRows);
    }
    const std::size_t at = 2 * (k1 * kHalf + k2);
    expect_bin(step, Complex(result[at], result[at + 1]), expected, magnitude);
  }
}

}  // namespace

int main() {
  fft_c2c_1d();
  fft_r2c_2d();
  std::printf("all steps passed\n");
  return 0;
}
