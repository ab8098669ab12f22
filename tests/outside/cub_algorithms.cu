// CUB's device-wide algorithms on seeded random data, one step each, every result checked on the
// host: the CUB part of the outside corpus (tests/fixtures/outside). Sizes of 2^25 to 2^26
// elements make each sweep kernel run for tens of microseconds or more on an H200; the small
// kernels CUB launches beside them (init, single-tile) are part of what is recorded too.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "outside_check.cuh"

namespace {

using outside::begin_step;
using outside::DeviceBuffer;
using outside::end_step;
using outside::expect;
using outside::TempStorage;

constexpr std::size_t kN = std::size_t{1} << 26;
constexpr int kBins = 256;

// Sorted, and holding the same keys: the sum and the xor of a multiset survive any permutation,
// and a sort that lost or duplicated keys would change them.
void check_sorted_keys(const char* step, const std::vector<std::uint32_t>& in,
                       const std::vector<std::uint32_t>& out) {
  expect(std::is_sorted(out.begin(), out.end()), step, "keys out of order");
  std::uint64_t sum_in = 0, sum_out = 0;
  std::uint32_t xor_in = 0, xor_out = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    sum_in += in[i];
    sum_out += out[i];
    xor_in ^= in[i];
    xor_out ^= out[i];
  }
  expect(sum_in == sum_out && xor_in == xor_out, step, "the sorted keys are not the input's");
}

void radix_sort_keys() {
  const char* step = "radix_sort_keys";
  begin_step(step);
  const auto keys = outside::random_words(kN, 1);
  DeviceBuffer<std::uint32_t> in(keys), out(kN);
  std::size_t bytes = 0;
  APP_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, in.get(), out.get(), kN));
  TempStorage temp(bytes);
  APP_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(), temp.bytes(), in.get(), out.get(), kN));
  end_step();
  check_sorted_keys(step, keys, out.download());
}

// Float keys with their original positions as values: the values say where each key came from,
// so the check is exact.
void radix_sort_pairs() {
  const char* step = "radix_sort_pairs";
  begin_step(step);
  const std::size_t n = kN / 2;
  const auto keys = outside::random_floats(n, 2);
  std::vector<std::uint32_t> positions(n);
  for (std::size_t i = 0; i < n; ++i) positions[i] = static_cast<std::uint32_t>(i);
  DeviceBuffer<float> keys_in(keys), keys_out(n);
  DeviceBuffer<std::uint32_t> values_in(positions), values_out(n);
  std::size_t bytes = 0;
  APP_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in.get(), keys_out.get(),
                                            values_in.get(), values_out.get(), n));
  TempStorage temp(bytes);
  APP_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp.bytes(), keys_in.get(), keys_out.get(),
                                            values_in.get(), values_out.get(), n));
  end_step();
  const auto sorted = keys_out.download();
  const auto from = values_out.download();
  expect(std::is_sorted(sorted.begin(), sorted.end()), step, "keys out of order");
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    expect(from[i] < n && !seen[from[i]], step, "the values are not a permutation");
    seen[from[i]] = true;
    expect(keys[from[i]] == sorted[i], step, "a key moved without its value");
  }
}

void inclusive_scan() {
  const char* step = "inclusive_scan";
  begin_step(step);
  // Values in [1, 16): the total of 2^26 of them stays below 2^31.
  outside::Random r(3);
  std::vector<int> values(kN);
  for (auto& v : values) v = 1 + static_cast<int>(r.below(15));
  DeviceBuffer<int> in(values), out(kN);
  std::size_t bytes = 0;
  APP_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in.get(), out.get(), kN));
  TempStorage temp(bytes);
  APP_CHECK(cub::DeviceScan::InclusiveSum(temp.get(), temp.bytes(), in.get(), out.get(), kN));
  end_step();
  const auto scanned = out.download();
  int running = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    running += values[i];
    expect(scanned[i] == running, step, "a prefix sum differs from the host's");
  }
}

// Integer samples and bins of width 1, so that the host puts every sample in the same bin as
// CUB does (float samples could fall on either side of a bin edge).
void histogram(const char* step, const std::vector<int>& samples) {
  begin_step(step);
  DeviceBuffer<int> in(samples), counts(kBins);
  std::size_t bytes = 0;
  APP_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, in.get(), counts.get(), kBins + 1,
                                                0, kBins, samples.size()));
  TempStorage temp(bytes);
  APP_CHECK(cub::DeviceHistogram::HistogramEven(temp.get(), temp.bytes(), in.get(), counts.get(),
                                                kBins + 1, 0, kBins, samples.size()));
  end_step();
  std::vector<int> expected(kBins, 0);
  for (int s : samples) ++expected[s];
  expect(counts.download() == expected, step, "bin counts differ from the host's");
}

void histogram_uniform() {
  outside::Random r(4);
  std::vector<int> samples(kN);
  for (auto& s : samples) s = static_cast<int>(r.below(kBins));
  histogram("histogram_uniform", samples);
}

// Seven samples in eight fall in one bin: every block's privatized counters are updated at the
// same few addresses, where the uniform histogram spreads them over all 256.
void histogram_skewed() {
  outside::Random r(5);
  std::vector<int> samples(kN);
  for (auto& s : samples) s = r.below(8) != 0 ? 17 : static_cast<int>(r.below(kBins));
  histogram("histogram_skewed", samples);
}

void reduce_sum() {
  const char* step = "reduce_sum";
  begin_step(step);
  const auto values = outside::random_floats(kN, 6);
  DeviceBuffer<float> in(values), out(1);
  std::size_t bytes = 0;
  APP_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, in.get(), out.get(), kN));
  TempStorage temp(bytes);
  APP_CHECK(cub::DeviceReduce::Sum(temp.get(), temp.bytes(), in.get(), out.get(), kN));
  end_step();
  double sum = 0, magnitude = 0;
  for (float v : values) {
    sum += v;
    magnitude += std::fabs(v);
  }
  // Float additions in any order stay within a few ulps of sum |x| per level of the tree.
  expect(std::fabs(out.download_one(0) - sum) <= 1e-5 * magnitude, step,
         "the sum differs from the host's");
}

void reduce_max() {
  const char* step = "reduce_max";
  begin_step(step);
  const auto values = outside::random_floats(kN, 7);
  DeviceBuffer<float> in(values), out(1);
  std::size_t bytes = 0;
  APP_CHECK(cub::DeviceReduce::Max(nullptr, bytes, in.get(), out.get(), kN));
  TempStorage temp(bytes);
  APP_CHECK(cub::DeviceReduce::Max(temp.get(), temp.bytes(), in.get(), out.get(), kN));
  end_step();
  expect(out.download_one(0) == *std::max_element(values.begin(), values.end()), step,
         "the maximum differs from the host's");
}

struct Above {
  float threshold;
  __host__ __device__ bool operator()(const float& x) const { return x > threshold; }
};

// Stream compaction: a quarter of the inputs kept, in their order.
void select_if() {
  const char* step = "select_if";
  begin_step(step);
  const auto values = outside::random_floats(kN, 8);
  DeviceBuffer<float> in(values), out(kN);
  DeviceBuffer<std::int64_t> selected(1);
  const Above keep{0.5f};
  std::size_t bytes = 0;
  APP_CHECK(cub::DeviceSelect::If(nullptr, bytes, in.get(), out.get(), selected.get(), kN, keep));
  TempStorage temp(bytes);
  APP_CHECK(cub::DeviceSelect::If(temp.get(), temp.bytes(), in.get(), out.get(), selected.get(), kN,
                                  keep));
  end_step();
  std::vector<float> expected;
  for (float v : values)
    if (keep(v)) expected.push_back(v);
  const std::int64_t count = selected.download_one(0);
  expect(count == static_cast<std::int64_t>(expected.size()), step, "wrong number selected");
  auto kept = out.download();
  kept.resize(expected.size());
  expect(kept == expected, step, "the selected values differ from the host's");
}

}  // namespace

int main() {
  radix_sort_keys();
  radix_sort_pairs();
  inclusive_scan();
  histogram_uniform();
  histogram_skewed();
  reduce_sum();
  reduce_max();
  select_if();
  std::printf("all steps passed\n");
  return 0;
}
