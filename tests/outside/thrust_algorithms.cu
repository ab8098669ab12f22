// Thrust's algorithms on seeded random data, one step each, every result checked on the host: the
// Thrust part of the outside corpus (tests/fixtures/outside). Thrust dispatches to CUB, so the
// kernels are CUB's, instantiated and tuned by Thrust's own calls: a comparison sort goes to the
// merge sort, a transform to CUB's transform kernel. Buffers are plain cudaMalloc memory behind
// thrust::device_ptr: a thrust::device_vector would fill each new vector with a kernel of its
// own before the step's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/gather.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include "outside_check.cuh"

namespace {

using outside::begin_step;
using outside::DeviceBuffer;
using outside::end_step;
using outside::expect;

constexpr std::size_t kN = std::size_t{1} << 26;

template <typename T>
thrust::device_ptr<T> begin(const DeviceBuffer<T>& b) {
  return thrust::device_pointer_cast(b.get());
}
template <typename T>
thrust::device_ptr<T> end(const DeviceBuffer<T>& b) {
  return thrust::device_pointer_cast(b.get() + b.size());
}

// The same values as the input: the sum and the xor of their bit patterns survive any
// permutation (a host sort of 2^26 values would take seconds of the run).
bool same_values(const std::vector<float>& a, const std::vector<float>& b) {
  std::uint64_t sum_a = 0, sum_b = 0;
  std::uint32_t xor_a = 0, xor_b = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::uint32_t bits_a, bits_b;
    std::memcpy(&bits_a, &a[i], sizeof bits_a);
    std::memcpy(&bits_b, &b[i], sizeof bits_b);
    sum_a += bits_a;
    sum_b += bits_b;
    xor_a ^= bits_a;
    xor_b ^= bits_b;
  }
  return a.size() == b.size() && sum_a == sum_b && xor_a == xor_b;
}

void sort_floats() {
  const char* step = "sort_floats";
  begin_step(step);
  const auto values = outside::random_floats(kN, 11);
  DeviceBuffer<float> v(values);
  thrust::sort(thrust::device, begin(v), end(v));
  end_step();
  const auto sorted = v.download();
  expect(std::is_sorted(sorted.begin(), sorted.end()), step, "out of order");
  expect(same_values(values, sorted), step, "the sorted values are not the input's");
}

// A comparator Thrust cannot turn into radix digits: this takes the merge sort.
struct ByMagnitude {
  __host__ __device__ bool operator()(float a, float b) const { return fabsf(a) < fabsf(b); }
};

void sort_by_magnitude() {
  const char* step = "sort_by_magnitude";
  begin_step(step);
  const std::size_t n = kN / 4;
  const auto values = outside::random_floats(n, 12);
  DeviceBuffer<float> v(values);
  thrust::sort(thrust::device, begin(v), end(v), ByMagnitude{});
  end_step();
  const auto sorted = v.download();
  expect(std::is_sorted(sorted.begin(), sorted.end(), ByMagnitude{}), step, "out of order");
  expect(same_values(values, sorted), step, "the sorted values are not the input's");
}

struct Square {
  __host__ __device__ double operator()(float x) const { return double(x) * x; }
};

// The sum of squares in double: a transform fused into CUB's reduction.
void transform_reduce() {
  const char* step = "transform_reduce";
  begin_step(step);
  const auto values = outside::random_floats(kN, 13);
  DeviceBuffer<float> v(values);
  const double got =
      thrust::transform_reduce(thrust::device, begin(v), end(v), Square{}, 0.0, thrust::plus<>{});
  end_step();
  double expected = 0;
  for (float x : values) expected += double(x) * x;
  expect(std::fabs(got - expected) <= 1e-8 * expected, step, "differs from the host's sum");
}

void inclusive_scan() {
  const char* step = "inclusive_scan";
  begin_step(step);
  outside::Random r(14);
  std::vector<std::int64_t> values(kN);
  for (auto& x : values) x = static_cast<std::int64_t>(r.below(1000)) - 400;
  DeviceBuffer<std::int64_t> in(values), out(kN);
  thrust::inclusive_scan(thrust::device, begin(in), end(in), begin(out));
  end_step();
  const auto scanned = out.download();
  std::int64_t running = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    running += values[i];
    expect(scanned[i] == running, step, "a prefix sum differs from the host's");
  }
}

struct Saxpy {
  float a;
  __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};

void transform_saxpy() {
  const char* step = "transform_saxpy";
  begin_step(step);
  const auto x = outside::random_floats(kN, 15);
  const auto y = outside::random_floats(kN, 16);
  DeviceBuffer<float> dx(x), dy(y), out(kN);
  const Saxpy op{1.75f};
  thrust::transform(thrust::device, begin(dx), end(dx), begin(dy), begin(out), op);
  end_step();
  const auto got = out.download();
  for (std::size_t i = 0; i < kN; ++i)
    // The device may fuse the multiply and add (one rounding instead of two).
    expect(std::fabs(got[i] - (double(op.a) * x[i] + y[i])) <= 1e-6, step, "differs from a*x + y");
}

// out[i] = in[map[i]] with random positions: each thread of a warp reads its own sector.
void gather_random() {
  const char* step = "gather_random";
  begin_step(step);
  const auto values = outside::random_floats(kN, 17);
  outside::Random r(18);
  std::vector<std::uint32_t> map(kN);
  for (auto& m : map) m = r.below(static_cast<std::uint32_t>(kN));
  DeviceBuffer<float> in(values), out(kN);
  DeviceBuffer<std::uint32_t> positions(map);
  thrust::gather(thrust::device, begin(positions), end(positions), begin(in), begin(out));
  end_step();
  const auto got = out.download();
  for (std::size_t i = 0; i < kN; ++i)
    expect(got[i] == values[map[i]], step, "an element differs from in[map[i]]");
}

}  // namespace

int main() {
  sort_floats();
  sort_by_magnitude();
  transform_reduce();
  inclusive_scan();
  transform_saxpy();
  gather_random();
  std::printf("all steps passed\n");
  return 0;
}
