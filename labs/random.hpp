// Seeded, reproducible input data. Never zeros: zeros hide unwritten outputs and wrong indices.
#pragma once

#include <cstdint>
#include <vector>

namespace gpulab::labs {

// Uniform floats in [lo, hi), from a counter-based generator (splitmix64): the same seed gives
// the same data on every machine, and filling hundreds of MB takes a fraction of a second.
inline void fill_uniform(std::vector<float>& data, std::uint64_t seed, float lo = -1.0f,
                         float hi = 1.0f) {
  const double scale = (static_cast<double>(hi) - lo) / 16777216.0;  // 24-bit mantissa
  for (std::size_t i = 0; i < data.size(); ++i) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    data[i] = static_cast<float>(lo + static_cast<double>(z >> 40) * scale);
  }
}

}  // namespace gpulab::labs
