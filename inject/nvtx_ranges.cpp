#include "inject/nvtx_ranges.hpp"

#include <algorithm>
#include <atomic>
#include <cwchar>

#include <sys/syscall.h>
#include <unistd.h>

#include <generated_nvtx_meta.h>

namespace gpulab::inject {
namespace {

// The calling thread's push/pop stacks, by domain handle (null: the default domain). One
// injection per process, so one set per thread.
struct ThreadStack {
  std::vector<NvtxRanges::Open> ranges;
  std::size_t beyond = 0;  // pushes past kMaxDepth, not kept
};
thread_local std::map<const void*, ThreadStack> t_stacks;

std::uint32_t thread_id() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

std::atomic<std::uint64_t> g_order{0};

std::string bounded(std::string s) {
  if (s.size() > NvtxRanges::kMaxNameBytes) s.resize(NvtxRanges::kMaxNameBytes);
  return s;
}

std::string narrow(const char* s) { return s ? bounded(s) : std::string(); }

// NVTX's wide names, as ASCII: anything else becomes '?'.
std::string narrow(const wchar_t* s) {
  std::string out;
  for (; s && *s && out.size() < NvtxRanges::kMaxNameBytes; ++s)
    out += (*s > 0 && *s < 128) ? static_cast<char>(*s) : '?';
  return out;
}

template <typename T>
const T& params(const CUpti_NvtxData& data) {
  return *static_cast<const T*>(data.functionParams);
}

template <typename T>
T returned(const CUpti_NvtxData& data) {
  return data.functionReturnValue ? *static_cast<const T*>(data.functionReturnValue) : T{};
}

}  // namespace

std::string NvtxRanges::domain_name(const void* handle) const {
  if (!handle) return "";
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = domains_.find(handle);
  return it == domains_.end() ? "(unnamed domain)" : it->second;
}

std::string NvtxRanges::message(const void* attributes) const {
  const auto* a = static_cast<const nvtxEventAttributes_t*>(attributes);
  if (!a) return "";
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return narrow(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return narrow(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = strings_.find(a->message.registered);
      return it == strings_.end() ? "" : it->second;
    }
    default:
      return "";
  }
}

void NvtxRanges::on_call(CUpti_CallbackId id, const CUpti_NvtxData& data) {
  switch (id) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      return push(nullptr, narrow(params<nvtxRangePushA_params>(data).message));
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      return push(nullptr, narrow(params<nvtxRangePushW_params>(data).message));
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      return push(nullptr, message(params<nvtxRangePushEx_params>(data).eventAttrib));
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto& p = params<nvtxDomainRangePushEx_params>(data);
      return push(p.domain, message(p.core.eventAttrib));
    }
    case CUPTI_CBID_NVTX_nvtxRangePop:
      return pop(nullptr);
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      return pop(params<nvtxDomainRangePop_params>(data).domain);
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      return start(nullptr, narrow(params<nvtxRangeStartA_params>(data).message),
                   returned<nvtxRangeId_t>(data));
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
      return start(nullptr, narrow(params<nvtxRangeStartW_params>(data).message),
                   returned<nvtxRangeId_t>(data));
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      return start(nullptr, message(params<nvtxRangeStartEx_params>(data).eventAttrib),
                   returned<nvtxRangeId_t>(data));
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto& p = params<nvtxDomainRangeStartEx_params>(data);
      return start(p.domain, message(p.core.eventAttrib), returned<nvtxRangeId_t>(data));
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      return end(params<nvtxRangeEnd_params>(data).id);
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      return end(params<nvtxDomainRangeEnd_params>(data).core.id);
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const auto handle = returned<nvtxDomainHandle_t>(data);
      std::lock_guard<std::mutex> lock(mutex_);
      if (handle) domains_[handle] = narrow(params<nvtxDomainCreateA_params>(data).name);
      return;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      const auto handle = returned<nvtxStringHandle_t>(data);
      std::lock_guard<std::mutex> lock(mutex_);
      if (handle) strings_[handle] = narrow(params<nvtxDomainRegisterStringA_params>(data).string);
      return;
    }
    default:
      return;
  }
}

void NvtxRanges::push(const void* domain, std::string name) {
  seen_ = true;
  ThreadStack& s = t_stacks[domain];
  if (s.ranges.size() >= kMaxDepth) {
    ++s.beyond;
    return;
  }
  s.ranges.push_back(Open{domain_name(domain), std::move(name), g_order++, now()});
}

void NvtxRanges::pop(const void* domain) {
  const auto it = t_stacks.find(domain);
  if (it == t_stacks.end()) return;  // a pop of a push made before gpulab was there
  ThreadStack& s = it->second;
  if (s.beyond > 0) {
    --s.beyond;
    return;
  }
  if (s.ranges.empty()) return;
  if (closed_) {
    const Open& top = s.ranges.back();
    std::vector<Open> parents = open_ranges();
    parents.erase(std::remove_if(parents.begin(), parents.end(),
                                 [&](const Open& o) { return o.order > top.order; }),
                  parents.end());
    closed_(report::RecordedRange{0, thread_id(), path_of(parents), top.start_ns, now()});
  }
  s.ranges.pop_back();
}

void NvtxRanges::start(const void* domain, std::string name, std::uint64_t id) {
  seen_ = true;
  std::string domain_text = domain_name(domain);
  const std::uint64_t at = now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_.size() >= kMaxStarted) return;
  started_[id] = Open{std::move(domain_text), std::move(name), g_order++, at};
}

void NvtxRanges::end(std::uint64_t id) {
  Open ended;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = started_.find(id);
    if (it == started_.end()) return;
    ended = std::move(it->second);
    started_.erase(it);
  }
  if (closed_)
    closed_(report::RecordedRange{0, thread_id(), path_of({ended}), ended.start_ns, now()});
}

void NvtxRanges::on_close(Clock now, Closed sink) {
  now_ = std::move(now);
  closed_ = std::move(sink);
}

std::uint64_t NvtxRanges::now() const { return now_ ? now_() : 0; }

report::NvtxOpen NvtxRanges::open_now() const {
  report::NvtxOpen open;
  for (const auto& [handle, s] : t_stacks) {
    if (s.ranges.empty()) continue;
    auto& stack = open.stacks[s.ranges.front().domain];
    for (const auto& r : s.ranges) stack.push_back(r.name);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, r] : started_) open.started[r.domain].push_back(r.name);
  return open;
}

std::vector<NvtxRanges::Open> NvtxRanges::open_ranges() const {
  std::vector<Open> all;
  for (const auto& [handle, s] : t_stacks) all.insert(all.end(), s.ranges.begin(), s.ranges.end());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, r] : started_) all.push_back(r);
  }
  std::sort(all.begin(), all.end(), [](const Open& a, const Open& b) { return a.order < b.order; });
  return all;
}

std::vector<std::string> NvtxRanges::path_of(const std::vector<Open>& ranges) {
  std::vector<std::string> path;
  for (const auto& r : ranges) path.push_back(r.domain.empty() ? r.name : r.domain + "@" + r.name);
  return path;
}

std::vector<std::string> NvtxRanges::path_now() const { return path_of(open_ranges()); }

void NvtxRanges::after_fork_in_child() {
  std::lock_guard<std::mutex> lock(mutex_);
  started_.clear();
}

}  // namespace gpulab::inject
