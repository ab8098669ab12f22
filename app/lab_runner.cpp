#include "app/lab_runner.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>

#include <fmt/format.h>

#include "app/version.hpp"
#include "cupti/activity_tracer.hpp"
#include "cupti/metric_catalogue.hpp"
#include "cupti/range_profiler.hpp"
#include "labs/device_buffer.hpp"
#include "labs/harness.hpp"
#include "reports/derived.hpp"
#include "reports/timeline.hpp"

namespace gpulab::app {
namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void progress(const RunSettings& s, const std::string& line) {
  if (s.progress) std::cerr << "gpulab: " << line << "\n";
}

// One line rewritten in place ("\r") while the passes run, then ended.
void pass_progress(const RunSettings& s, const std::string& what, int pass, int passes) {
  if (!s.progress) return;
  std::cerr << "\rgpulab: " << what << ": pass " << pass << " of " << passes << std::flush;
  if (pass == passes) std::cerr << "\n";
}

// Launch counts after the lab's defaults are applied, and whether each launch waits for the
// lab to prepare its inputs (traced labs: see LabRun::prepare). Kernel labs keep their timed
// launches queued back to back.
struct Repetitions {
  int warmup;
  int repeat;
  bool prepared;
};

void check_and_time(labs::LabRun& run, report::Variant& out, Repetitions reps,
                    const report::Report& r, cudaStream_t stream, labs::L2Flusher* flusher) {
  run.prepare(out.name);
  run.poison_outputs(stream);
  run.launch(out.name, stream);
  GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  out.check = run.check(out.name);
  if (out.check.status == report::CheckStatus::failed) out.status = report::VariantStatus::failed;

  out.timing = labs::time_launches([&](cudaStream_t s) { run.launch(out.name, s); }, stream,
                                   reps.warmup, reps.repeat, flusher,
                                   reps.prepared ? std::function<void()>([&] { run.prepare(out.name); })
                                                 : std::function<void()>());
  const auto& work = r.work_of(out);
  if (work.bytes() > 0 && out.timing.median > 0) {
    out.effective_bandwidth = work.bytes() / out.timing.median;
    if (r.device.roofs.copy_bandwidth > 0)
      out.roof_fraction = out.effective_bandwidth / r.device.roofs.copy_bandwidth;
  }
}

// Against the nearest baseline before the variant: a lab with two experiments (the spill lab's
// local array, then its register cap) lists each baseline before its own variants.
void set_speedups(report::Report& r) {
  const report::Variant* base = nullptr;
  for (auto& v : r.variants) {
    if (v.role == report::Role::baseline) base = &v;
    if (base && base->timing.median > 0 && v.timing.median > 0)
      v.speedup = base->timing.median / v.timing.median;
  }
}

const char* const kFlushedPasses = "all: L2 flushed before every replay pass";
const char* const kWarmPasses = "none: caches not flushed between replay passes";

void file_counters(report::Variant& v, const cupti::RangeProfiler& profiler,
                   const std::string& set_name, const char* replay, const char* cache_control,
                   double seconds) {
  v.counters.collected = true;
  v.counters.metric_set = set_name;
  v.counters.passes = profiler.passes();
  v.counters.replay = replay;
  v.counters.cache_control = cache_control;
  v.counters.collection_seconds = seconds;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Kernel replay of one variant: a range per kernel it launches. When the count differs from
// the kernels it declared (a library launching extra kernels), the ranges are kept, named by
// launch order, without static attributes, and the report says so.
void profile_variant_kernels(cupti::RangeProfiler& profiler, labs::LabRun& run,
                             report::Report& r, report::Variant& v, const std::string& set_name,
                             cudaStream_t stream) {
  const auto started = std::chrono::steady_clock::now();
  auto ranges = profiler.profile_kernels(
      [&] {
        run.launch(v.name, stream);
        GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
      },
      v.kernels.size());
  if (ranges.size() != v.kernels.size() || profiler.dropped() > 0) {
    r.warnings.push_back(fmt::format(
        "{}: declared {} kernel(s) but launched {}{}; counters are listed by launch order",
        v.name, v.kernels.size(), ranges.size() + profiler.dropped(),
        profiler.dropped() ? fmt::format(" ({} not recorded)", profiler.dropped()) : ""));
    v.kernels.clear();
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      report::Kernel& k = v.kernels.emplace_back();
      k.name = "kernel " + std::to_string(i);
      k.launch_index = static_cast<int>(i);
    }
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) v.kernels[i].metrics = std::move(ranges[i].values);
  file_counters(v, profiler, set_name, "kernel", kWarmPasses, seconds_since(started));
}

// Counters for every measured variant, after all timing is done. With cache control "all",
// single-kernel variants are replayed by gpulab with an L2 flush before each pass (user
// replay, as ncu does by default); variants of several kernels use kernel replay, which gives
// per-kernel numbers but cannot flush between passes.
void collect_counters(Session& session, labs::LabRun& run, report::Report& r,
                      const std::vector<std::string>& metric_names, const RunSettings& settings,
                      cudaStream_t stream, labs::L2Flusher& flusher) {
  std::vector<report::Variant*> profiled;
  for (auto& v : r.variants)
    if (v.status != report::VariantStatus::skipped) profiled.push_back(&v);
  if (profiled.empty()) return;

  // A named set adapts to the device: metrics its CUPTI does not know are left out, and the
  // report says which. (A list the user typed is taken as it is: CUPTI rejects unknown names.)
  std::vector<std::string> names = metric_names;
  if (metrics::is_set_name(settings.metrics)) {
    if (const auto unsupported = session.unsupported_metrics(names); unsupported && !unsupported->empty()) {
      std::string list;
      for (const auto& n : *unsupported) {
        list += (list.empty() ? "" : ", ") + n;
        names.erase(std::remove(names.begin(), names.end(), n), names.end());
      }
      r.warnings.push_back("not supported on this device, left out of the '" + settings.metrics +
                           "' set: " + list);
    }
  }
  std::string why_not;
  cupti::RangeProfiler* profiler = session.profiler(names, why_not);
  r.device = session.device();  // the profiler fills in the chip name and availability
  if (!profiler) {
    r.warnings.push_back(why_not + "; timing and correctness are reported without counters");
    for (auto* v : profiled) v->counters.note = why_not;
    return;
  }
  const std::string set_name = metrics::is_set_name(settings.metrics) ? settings.metrics : "custom";

  std::vector<report::Variant*> flushed, per_kernel;
  for (auto* v : profiled)
    (settings.cache_control == "all" && v->kernels.size() == 1 ? flushed : per_kernel).push_back(v);

  if (!flushed.empty()) {
    std::vector<cupti::RangeProfiler::UserRange> ranges;
    for (auto* v : flushed)
      ranges.push_back({v->name, [&run, &stream, v] { run.launch(v->name, stream); }});
    const auto started = std::chrono::steady_clock::now();
    const std::string what = fmt::format("{} counters, {} variant(s)", r.lab.name, flushed.size());
    auto values = profiler->profile_ranges(
        ranges, [&] { flusher.flush(stream); },
        [&](int pass, int passes) { pass_progress(settings, what, pass, passes); });
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    const double seconds = seconds_since(started);
    for (std::size_t i = 0; i < flushed.size() && i < values.size(); ++i) {
      flushed[i]->kernels[0].metrics = std::move(values[i].values);
      file_counters(*flushed[i], *profiler, set_name, "user", kFlushedPasses, seconds);
    }
  }
  for (auto* v : per_kernel) {
    progress(settings, fmt::format("{}/{}: counters, kernel replay, {} passes per kernel",
                                   r.lab.name, v->name, profiler->passes()));
    profile_variant_kernels(*profiler, run, r, *v, set_name, stream);
  }
}

// One more launch of every measured variant, recorded by the activity tracer: a pass of its
// own, after timing and before counters. A warm-up launch runs first with tracing on (see
// ActivityTracer::trace) and is left out; the lab prepares its inputs before each launch.
void trace_variants(cupti::ActivityTracer& tracer, labs::LabRun& run, report::Report& r,
                    const RunSettings& settings, cudaStream_t stream) {
  for (auto& v : r.variants) {
    if (v.status == report::VariantStatus::skipped) continue;
    progress(settings, fmt::format("{}/{}: activity trace", r.lab.name, v.name));
    const auto launch = [&] {
      run.launch(v.name, stream);
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    };
    run.prepare(v.name);
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    v.timeline = tracer.trace(launch, [&] {
      launch();
      run.prepare(v.name);
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    });
  }
}

}  // namespace

report::Report run_lab(Session& session, const labs::Lab& lab, const RunSettings& settings,
                       const std::vector<std::string>& argv) {
  const auto& spec = lab.spec();
  const auto variants = labs::select_variants(spec, settings.variants);
  const auto params = labs::resolve_params(spec, settings.size, settings.params);
  RunSettings resolved = settings;
  if (resolved.metrics.empty()) resolved.metrics = spec.traced ? "none" : "basic";
  const auto metric_names = metrics::resolve(resolved.metrics);
  const Repetitions reps{settings.warmup.value_or(spec.default_warmup),
                         settings.repeat.value_or(spec.default_repeat), spec.traced};

  report::Report r;
  r.tool.version = kVersion;
  r.tool.git_sha = kGitSha;
  r.argv = argv;
  r.created_utc = utc_now();
  r.device = session.device();
  r.lab = {spec.name, spec.topic, spec.summary};
  r.params = params;

  // The tracer exists before the lab allocates: see ActivityTracer's constructor.
  cupti::ActivityTracer* tracer = nullptr;
  if (spec.traced) {
    std::string why_not;
    tracer = session.tracer(why_not);
    if (!tracer) r.warnings.push_back(why_not + "; the variants are reported without a timeline");
  }

  progress(settings, fmt::format("{}: setting up", spec.name));
  auto run = lab.setup(params, settings.seed);
  // Setup may have copied inputs on the legacy default stream, with which our non-blocking
  // stream does not synchronize (a pageable copy can return before the data has landed).
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  r.work = run->work();

  // A traced lab's variants use streams of their own; the legacy default stream synchronizes
  // with all of them, so events recorded on it bracket the whole variant.
  labs::CudaStream own_stream;
  const cudaStream_t stream = spec.traced ? cudaStreamLegacy : own_stream.get();
  labs::L2Flusher flusher(r.device.l2_bytes);

  for (const auto* vs : variants) {
    report::Variant& out = r.variants.emplace_back();
    out.name = vs->name;
    out.role = vs->role;
    out.description = vs->description;
    out.work = run->variant_work(vs->name);
    if (auto reason = run->skip_reason(vs->name)) {
      out.status = report::VariantStatus::skipped;
      out.skip_reason = *reason;
      out.check.message = *reason;
      continue;
    }
    int index = 0;
    for (const auto& launch : run->kernels(vs->name)) {
      report::Kernel& k = out.kernels.emplace_back();
      k.name = launch.name;
      k.launch_index = index++;
      k.attributes = labs::static_attributes(launch, r.device.max_warps_per_sm);
    }
    progress(settings, fmt::format("{}/{}: check and time", spec.name, vs->name));
    check_and_time(*run, out, reps, r, stream, settings.cold ? &flusher : nullptr);
  }
  set_speedups(r);
  if (tracer) trace_variants(*tracer, *run, r, settings, stream);
  if (!metric_names.empty())
    collect_counters(session, *run, r, metric_names, resolved, stream, flusher);
  report::derive_all(r);
  report::summarize_timelines(r);
  return r;
}

}  // namespace gpulab::app
