// CPU references of the larger labs (billions of operations at the default size) run on all of
// the host's cores.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

namespace gpulab::labs {

// Runs body(begin, end) over [0, n) in contiguous chunks, one thread per core. The body must
// compute each element on its own, so that the result does not depend on the chunking.
inline void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
  const std::size_t workers =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), 64);
  const std::size_t chunk = std::max<std::size_t>((n + workers - 1) / workers, 4096);
  std::vector<std::thread> pool;
  for (std::size_t begin = 0; begin < n; begin += chunk) {
    const std::size_t end = std::min(n, begin + chunk);
    try {
      pool.emplace_back(body, begin, end);
    } catch (const std::system_error&) {
      body(begin, end);  // no thread to be had: do this chunk here
    }
  }
  for (auto& t : pool) t.join();
}

}  // namespace gpulab::labs
