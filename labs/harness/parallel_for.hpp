// Input generation, CPU references and result checks of the larger labs (hundreds of millions of
// elements at the default sizes) run on all of the host's cores.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace gpulab::labs {

// The contiguous chunks [begin, end) that cover [0, n): one per core, none smaller than 64 Ki
// elements (below that a thread costs more than it saves), so a small n is one chunk.
inline std::vector<std::pair<std::size_t, std::size_t>> work_chunks(std::size_t n) {
  constexpr std::size_t kMinChunk = std::size_t{1} << 16;
  const std::size_t workers =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), 64);
  const std::size_t chunk = std::max((n + workers - 1) / workers, kMinChunk);
  std::vector<std::pair<std::size_t, std::size_t>> chunks;
  for (std::size_t begin = 0; begin < n; begin += chunk)
    chunks.emplace_back(begin, std::min(n, begin + chunk));
  return chunks;
}

// Runs task(i) for each i < count, a thread each; a single task runs here, without a thread.
inline void run_tasks(std::size_t count, const std::function<void(std::size_t)>& task) {
  if (count == 1) {
    task(0);
    return;
  }
  std::vector<std::thread> pool;
  for (std::size_t i = 0; i < count; ++i) {
    try {
      pool.emplace_back(task, i);
    } catch (const std::system_error&) {
      task(i);  // no thread to be had: do this one here
    }
  }
  for (auto& t : pool) t.join();
}

// Runs body(begin, end) over [0, n), a thread per chunk of work_chunks(n). The body must compute
// each element on its own, so that the result does not depend on the chunking.
inline void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
  const auto chunks = work_chunks(n);
  run_tasks(chunks.size(), [&](std::size_t i) { body(chunks[i].first, chunks[i].second); });
}

// body(begin, end) of each chunk of work_chunks(n), run as parallel_for runs them: the chunks'
// results in the order of their elements, for the caller to combine.
template <typename Result, typename Body>
std::vector<Result> parallel_chunks(std::size_t n, const Body& body) {
  const auto chunks = work_chunks(n);
  std::vector<Result> results(chunks.size());
  run_tasks(chunks.size(),
            [&](std::size_t i) { results[i] = body(chunks[i].first, chunks[i].second); });
  return results;
}

}  // namespace gpulab::labs
