// Seeded, reproducible input data. Never zeros: zeros hide unwritten outputs and wrong indices.
//
// One generator, splitmix64 (counter-based): value i of a seed's sequence is a mix of
// seed + (i + 1)·γ (γ = 2^64 / golden ratio), so the same seed gives the same data on every
// machine and any element can be computed on its own: hundreds of MB are filled on all cores at
// once, in a few hundredths of a second (2^28 floats: 0.4 s on one core).
#pragma once

#include <cstdint>
#include <vector>

#include "labs/harness/parallel_for.hpp"

namespace gpulab::labs {

// splitmix64's finalizer: every input bit moves about half of the output bits.
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Value i of the sequence of `seed`.
inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t i) {
  return mix64(seed + 0x9E3779B97F4A7C15ull * (i + 1));
}

// The seed of a lab's input number `stream` (0, 1, 2, ...) for the run's `seed`. Stream 0 is
// the seed itself (a lab with one input fills it from the seed); the others are mixed, so that
// two inputs never share values (seed + γ, say, would give the sequence of `seed` shifted by
// one element).
inline std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  if (stream == 0) return seed;
  return mix64(seed ^ (0xD1B54A32D192ED03ull * (stream + 1)));
}

// Uniform floats in [lo, hi), the top 24 bits of each value (a float's mantissa).
inline void fill_uniform(std::vector<float>& data, std::uint64_t seed, float lo = -1.0f,
                         float hi = 1.0f) {
  const double scale = (static_cast<double>(hi) - lo) / 16777216.0;
  float* out = data.data();
  parallel_for(data.size(), [=](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      out[i] = static_cast<float>(lo + static_cast<double>(random_bits(seed, i) >> 40) * scale);
  });
}

}  // namespace gpulab::labs
