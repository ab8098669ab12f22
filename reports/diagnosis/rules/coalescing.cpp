// The rule "coalescing" (docs/diagnosis.md): do global accesses move more bytes than they use?
#include "reports/diagnosis/rules/rules.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;
namespace d = derived;

// With the instrumented byte counts, the over-fetch factor judges any access width (a float4
// load moves 16 sectors per request and wastes nothing). Without them, sectors per request
// against the 4-byte ideal is the fallback, which over-flags 8- and 16-byte accesses.
// Loads and stores are weighed by their traffic (global_overfetch), so that a kernel whose
// only scattered accesses are a few single-thread stores is not flagged. Where the L1 hit rate
// is measured, the bytes that went past L1 decide: sectors a load moved but L1 then served to
// the next lane or instruction cost nothing beyond L1 (a table every warp reads, a dot product
// reading two interleaved vectors: docs/thresholds.md).
Outcome check(const Probe& p) {
  const auto all = p.metric(d::global_overfetch);
  if (all) {
    const std::string t = "uncoalesced.overfetch";
    const auto past_l1 = p.metric(d::global_overfetch_past_l1);
    const double judged = past_l1.value_or(*all);
    // Each direction is judged on its own pattern: a strided load stays uncoalesced however
    // coalesced the stores beside it are (PyTorch's strided-slice copy: loads 2.0, stores 1.0,
    // 1.5 combined). Loads are judged past L1 where its hit rate is measured (the sectors L1
    // served again cost no L2 or DRAM byte); a store goes past L1 whatever the rate.
    const auto ld = p.metric(d::gld_overfetch), st = p.metric(d::gst_overfetch);
    const auto hit = p.metric(m::l1_hit_pct);
    std::optional<double> worst;
    if (ld) worst = hit ? *ld * (1.0 - *hit / 100) : *ld;
    if (st) worst = std::max(worst.value_or(0), *st);
    std::vector<Evidence> ev{evidence(d::gld_overfetch, ld), evidence(d::gst_overfetch, st),
                             evidence(d::global_overfetch, all)};
    if (past_l1) ev.push_back(evidence(d::global_overfetch_past_l1, past_l1));
    ev.push_back(against(p, "worst_direction_overfetch", worst, ">=", t));
    if (!worst || *worst < p.threshold(t)) return no(ev);
    // The cost is the share of all moved bytes nobody asked for, scaled by how much of the
    // kernel's traffic the instrumented directions cover: a kernel that loads with cp.async or
    // TMA (no LDG to count) and stores one word per row has a high store over-fetch on almost
    // no bytes, and so has a reduction's one partial sum per block (8x on a few kilobytes).
    double covered = 0, total = 0;
    for (const auto& [sectors, bytes] : {std::pair{m::gld_sectors, m::gld_bytes_requested},
                                         std::pair{m::gst_sectors, m::gst_bytes_requested}}) {
      const double moved = 32.0 * p.metric(sectors).value_or(0);
      total += moved;
      if (p.metric(bytes).value_or(0) > 0) covered += moved;
    }
    total = std::max(total, p.metric(d::dram_bytes).value_or(0));
    return yes(std::max(0.0, 1.0 - 1.0 / judged) * (total > 0 ? covered / total : 1.0), ev);
  }
  const auto ld_spr = p.metric(d::gld_sectors_per_request);
  const auto st_spr = p.metric(d::gst_sectors_per_request);
  const std::string t = "uncoalesced.sectors_per_request";
  std::vector<Evidence> ev{against(p, d::gld_sectors_per_request, ld_spr, ">=", t),
                           against(p, d::gst_sectors_per_request, st_spr, ">=", t)};
  if (!ld_spr && !st_spr) return not_measured(ev);
  const double worst = std::max(ld_spr.value_or(0), st_spr.value_or(0));
  if (worst < p.threshold(t)) return no(ev);
  return yes(1.0 - 4.0 / worst, ev);  // share of moved sectors a 4-byte-coalesced access avoids
}

}  // namespace

const Rule& coalescing() {
  static const Rule rule = [] {
    Rule r;
    r.id = "coalescing";
    r.question = "Do global accesses move more bytes than they use?";
    r.expression =
        "global_overfetch_past_l1 (and global_overfetch), else "
        "max(sectors per request)";
    r.finding = {
        "uncoalesced-global",
        "Uncoalesced global memory access",
        "A warp's loads or stores touch more 32-byte sectors than the bytes it uses need: strided, "
        "column-wise or misaligned addresses make the memory system move whole sectors for a few "
        "useful bytes each.",
        "Make consecutive threads touch consecutive addresses: swap the index mapping, stage tiles "
        "through shared memory to turn the access around, use structure-of-arrays layouts, align "
        "rows (cudaMallocPitch).",
        "global_overfetch_past_l1 under uncoalesced.overfetch: each byte the warps ask for moves "
        "past L1 about once",
        {"transpose", "coalescing", "aos-soa", "pitched"}};
    r.thresholds = {
        {"uncoalesced.overfetch", 2, 1, 1e6,
         "bytes moved per byte requested by global loads or stores (instrumented counts), from "
         "which accesses count as uncoalesced"},
        {"uncoalesced.sectors_per_request", 8, 1, 1e6,
         "without the instrumented counts: global sectors per request from which accesses count "
         "as uncoalesced (4 is ideal for 4-byte words, 8 for 8-byte, 16 for 16-byte)"}};
    r.quantities = {{"worst_direction_overfetch", metrics::Unit::ratio}};
    r.needs = {m::gld_sectors, m::gld_requests, m::gst_sectors, m::gst_requests};
    r.check = check;
    r.rank = Rank::cause_of_waiting;
    // Calibrated: median error 0.04 (H100) and 0.06 (H200), worst x1.23 (docs/estimates.md).
    r.estimate_model = "roof";
    r.estimate_calibrated = true;
    r.lines =
        LineMeasure{"the global sectors beyond 4 per request",
                    [](const std::map<std::string, double>& c) {
                      return std::max(0.0, counted(c, source_counter::global_sectors) -
                                               4 * counted(c, source_counter::global_requests));
                    },
                    [](const LineFigures& f) {
                      return f.sectors_per_request
                                 ? fmt::format("{:.1f} sectors per request", *f.sectors_per_request)
                                 : std::string();
                    }};
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
