#include "inject/counter_lock.hpp"

#include <pthread.h>

#include <cstdio>

namespace gpulab::inject {
namespace {

CounterLock* g_lock = nullptr;  // the process's one (the injection's)

std::string uuid_text(CUdevice device) {
  CUuuid uuid{};
  if (cuDeviceGetUuid_v2(&uuid, device) != CUDA_SUCCESS) return "device" + std::to_string(device);
  std::string out;
  char hex[3];
  for (unsigned char byte : uuid.bytes) {
    std::snprintf(hex, sizeof hex, "%02x", byte);
    out += hex;
  }
  return out;
}

}  // namespace

CounterLock::CounterLock() {
  g_lock = this;
  static const int registered = ::pthread_atfork(nullptr, nullptr, &CounterLock::forget_in_child);
  (void)registered;
}

CounterLock::~CounterLock() {
  if (g_lock == this) g_lock = nullptr;
}

std::string CounterLock::lock_name(const std::string& uuid) { return "gpulab-counters-" + uuid; }

void CounterLock::forget_in_child() {
  if (!g_lock) return;
  for (auto& [device, lock] : g_lock->locks_) lock->release();
  g_lock->held_ = nullptr;
}

MachineLock::Outcome CounterLock::acquire(CUdevice device, double seconds, std::string& why) {
  auto& lock = locks_[device];
  if (!lock) lock = std::make_unique<MachineLock>(lock_name(uuid_text(device)));
  const auto outcome = lock->acquire(seconds);
  if (outcome == MachineLock::Outcome::held) held_ = lock.get();
  if (outcome == MachineLock::Outcome::failed) why = lock->why();
  return outcome;
}

void CounterLock::release() {
  if (held_) held_->release();
  held_ = nullptr;
}

}  // namespace gpulab::inject
