// cuRAND's host API, one generator per step, every result checked on the host: the cuRAND part of
// the outside corpus's held-out set (tests/fixtures/outside). Four generators whose kernels do
// different work per value written: Philox's counter rounds with the Box-Muller transform
// (normal floats), XORWOW's state set-up and steps (uniform floats), MRG32k3a's double-precision
// recurrence (uniform doubles) and Sobol's direction vectors (quasi-random floats). 2^26 values
// each (256 to 512 MiB written). The checks are the moments the distribution must have.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <curand.h>

#include "outside_check.cuh"

#define OUTSIDE_CURAND(call) OUTSIDE_CHECK(call, CURAND_STATUS_SUCCESS, outside::status_number)

namespace {

using outside::begin_step;
using outside::DeviceBuffer;
using outside::end_step;
using outside::expect;

constexpr std::size_t kValues = std::size_t{1} << 26;

class Generator {
 public:
  explicit Generator(curandRngType_t type) { OUTSIDE_CURAND(curandCreateGenerator(&gen_, type)); }
  ~Generator() {
    if (curandDestroyGenerator(gen_) != CURAND_STATUS_SUCCESS)
      std::fprintf(stderr, "curandDestroyGenerator failed\n");
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;
  curandGenerator_t get() const { return gen_; }

 private:
  curandGenerator_t gen_ = nullptr;
};

struct Moments {
  double mean = 0, deviation = 0, low = 0, high = 0;
};

template <typename T>
Moments moments_of(const std::vector<T>& values) {
  Moments m;
  m.low = m.high = static_cast<double>(values.front());
  double sum = 0, squares = 0;
  for (const T v : values) {
    const double x = static_cast<double>(v);
    sum += x;
    squares += x * x;
    m.low = std::min(m.low, x);
    m.high = std::max(m.high, x);
  }
  m.mean = sum / static_cast<double>(values.size());
  m.deviation = std::sqrt(squares / static_cast<double>(values.size()) - m.mean * m.mean);
  return m;
}

// Uniform on (0, 1]: mean 1/2 and deviation 1/sqrt(12) = 0.2887. Over 2^26 values the sampling
// error of the mean is 0.29 / 2^13 = 3.5e-5, so 1e-3 is far outside chance for a correct
// generator and far inside the error of a broken one.
template <typename T>
void expect_uniform(const char* step, const std::vector<T>& values) {
  const Moments m = moments_of(values);
  expect(m.low > 0 && m.high <= 1, step, "a value outside (0, 1]");
  expect(std::abs(m.mean - 0.5) < 1e-3, step, "the mean is not 1/2");
  expect(std::abs(m.deviation - 0.288675) < 1e-3, step, "the deviation is not 1/sqrt(12)");
}

void philox_normal() {
  const char* step = "philox_normal";
  begin_step(step);
  DeviceBuffer<float> out(kValues);
  Generator gen(CURAND_RNG_PSEUDO_PHILOX4_32_10);
  OUTSIDE_CURAND(curandSetPseudoRandomGeneratorSeed(gen.get(), 21));
  OUTSIDE_CURAND(curandGenerateNormal(gen.get(), out.get(), kValues, 0.0f, 1.0f));
  end_step();
  const Moments m = moments_of(out.download());
  expect(std::abs(m.mean) < 1e-3, step, "the mean is not 0");
  expect(std::abs(m.deviation - 1) < 1e-3, step, "the deviation is not 1");
}

void xorwow_uniform() {
  const char* step = "xorwow_uniform";
  begin_step(step);
  DeviceBuffer<float> out(kValues);
  Generator gen(CURAND_RNG_PSEUDO_XORWOW);
  OUTSIDE_CURAND(curandSetPseudoRandomGeneratorSeed(gen.get(), 22));
  OUTSIDE_CURAND(curandGenerateUniform(gen.get(), out.get(), kValues));
  end_step();
  expect_uniform(step, out.download());
}

void mrg_uniform_double() {
  const char* step = "mrg_uniform_double";
  begin_step(step);
  DeviceBuffer<double> out(kValues);
  Generator gen(CURAND_RNG_PSEUDO_MRG32K3A);
  OUTSIDE_CURAND(curandSetPseudoRandomGeneratorSeed(gen.get(), 23));
  OUTSIDE_CURAND(curandGenerateUniformDouble(gen.get(), out.get(), kValues));
  end_step();
  expect_uniform(step, out.download());
}

void sobol_uniform() {
  const char* step = "sobol_uniform";
  begin_step(step);
  DeviceBuffer<float> out(kValues);
  Generator gen(CURAND_RNG_QUASI_SOBOL32);
  OUTSIDE_CURAND(curandSetQuasiRandomGeneratorDimensions(gen.get(), 4));
  OUTSIDE_CURAND(curandGenerateUniform(gen.get(), out.get(), kValues));
  end_step();
  expect_uniform(step, out.download());
}

}  // namespace

int main() {
  philox_normal();
  xorwow_uniform();
  mrg_uniform_double();
  sobol_uniform();
  std::printf("all steps passed\n");
  return 0;
}
