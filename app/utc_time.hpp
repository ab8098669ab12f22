// The time a report was made, as reports write it: ISO 8601 in UTC, to the second.
#pragma once

#include <chrono>
#include <ctime>
#include <string>

namespace gpulab::app {

inline std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace gpulab::app
