#include "cupti/cubin_store.hpp"

#include <cstdlib>

#include <cupti_pcsampling.h>

#include "cupti/cupti_check.hpp"

namespace gpulab::cupti {

void CubinStore::add(const void* cubin, std::size_t size) {
  if (cubin == nullptr || size == 0) return;
  CUpti_GetCubinCrcParams p{CUpti_GetCubinCrcParamsSize};
  p.cubin = cubin;
  p.cubinSize = size;
  if (cuptiGetCubinCrc(&p) != CUPTI_SUCCESS) return;  // not a cubin CUPTI reads (PTX): no lines
  const auto* bytes = static_cast<const char*>(cubin);
  std::lock_guard<std::mutex> lock(mutex_);
  cubins_.try_emplace(p.cubinCrc, bytes, bytes + size);
}

bool CubinStore::has(std::uint64_t crc) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cubins_.count(crc) > 0;
}

std::size_t CubinStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cubins_.size();
}

std::optional<report::SourceLine> CubinStore::line_of(std::uint64_t crc,
                                                      const std::string& function,
                                                      std::uint64_t offset) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = cubins_.find(crc);
  if (it == cubins_.end()) return std::nullopt;
  CUpti_GetSassToSourceCorrelationParams p{CUpti_GetSassToSourceCorrelationParamsSize};
  p.cubin = it->second.data();
  p.cubinSize = it->second.size();
  p.functionName = function.c_str();
  p.pcOffset = offset;
  if (cuptiGetSassToSourceCorrelation(&p) != CUPTI_SUCCESS) return std::nullopt;
  // The two strings are the caller's to free.
  const std::string file = p.fileName ? p.fileName : "";
  const std::string dir = p.dirName ? p.dirName : "";
  std::free(p.fileName);
  std::free(p.dirName);
  if (file.empty() || p.lineNumber == 0) return std::nullopt;
  report::SourceLine line;
  line.file = file.front() == '/' || dir.empty() ? file : dir + "/" + file;
  line.line = static_cast<int>(p.lineNumber);
  return line;
}

report::LineLookup CubinStore::lookup() const {
  return [this](std::uint64_t crc, const std::string& function, std::uint64_t offset) {
    return line_of(crc, function, offset);
  };
}

}  // namespace gpulab::cupti
