// The cubins of the modules the process loads, captured as they load (the launch recorder's
// resource callback) and keyed by CUPTI's CRC, the key per-instruction data names them by; and
// the source line of an instruction of one, by CUPTI's SASS-to-source correlation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "reports/source/collected.hpp"

namespace gpulab::cupti {

class CubinStore {
 public:
  // Copies the cubin (CUPTI's pointer is valid only during the callback).
  void add(const void* cubin, std::size_t size);

  bool has(std::uint64_t crc) const;
  std::size_t size() const;

  // The line of the instruction at `offset` in `function`; none without line information (code
  // built without -lineinfo) or when the cubin was not captured.
  std::optional<report::SourceLine> line_of(std::uint64_t crc, const std::string& function,
                                            std::uint64_t offset) const;
  // line_of, for report::assemble_source; borrows the store.
  report::LineLookup lookup() const;

 private:
  mutable std::mutex mutex_;  // modules load on the threads that first use them
  std::map<std::uint64_t, std::vector<char>> cubins_;
};

}  // namespace gpulab::cupti
