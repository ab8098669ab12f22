// From per-instruction records (what CUPTI's SASS metrics and PC sampling deliver) to a kernel's
// `source`: joined with the disassembly of the same cubin by offset, or standing alone with the
// lines a lookup gives; CUPTI's line table checked against nvdisasm's; too few samples on a line;
// and reports gpulab recorded on an H100 with `run LAB --source`: aos-soa, whose marked line
// moves 16 sectors per request, and transpose and coalescing, with stall samples, whose marked
// lines are where the naive store and the strided load sit.
#include <gtest/gtest.h>

#include "reports/json_reader.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/source/collected.hpp"
#include "reports/source/line_view.hpp"
#include "reports/source_json.hpp"
#include "unit/lab_markers.hpp"

namespace gpulab::report {
namespace {

namespace c = source_counter;

SassInstruction instruction(std::uint64_t offset, const std::string& sass, int line) {
  SassInstruction i;
  i.offset = offset;
  i.sass = sass;
  i.where = SourceLine{"k.cu", line};
  return i;
}

// The disassembly of a three-instruction kernel: a load on line 6, a store on line 7.
KernelSource listing() {
  KernelSource s;
  s.function = "_Z1kPf";
  s.instructions = {instruction(0x0, "LDC R1, c[0x0][0x28]", 5),
                    instruction(0x10, "LDG.E R2, desc[UR4][R2.64]", 6),
                    instruction(0x20, "STG.E desc[UR4][R4.64], R2", 7)};
  return s;
}

// A lookup that answers as the listing does, but one instruction further on each line.
LineLookup shifted_lookup() {
  return [](std::uint64_t, const std::string&, std::uint64_t offset) {
    return std::optional<SourceLine>(SourceLine{"k.cu", 5 + static_cast<int>(offset / 0x10) + 1});
  };
}

LineLookup listing_lookup() {
  return [](std::uint64_t crc, const std::string& function, std::uint64_t offset) {
    EXPECT_EQ(crc, 7u);
    EXPECT_EQ(function, "_Z1kPf");
    for (const auto& i : listing().instructions)
      if (i.offset == offset) return i.where;
    return std::optional<SourceLine>();
  };
}

std::vector<InstructionRecord> records() {
  return {{7, "_Z1kPf", 0x10, {{c::inst_executed, 100}, {c::global_requests, 100}}},
          {7, "_Z1kPf", 0x20, {{c::inst_executed, 100}, {c::global_sectors, 3200}}},
          {7, "_Z1kPf", 0x20, {{c::samples, 40}, {"samples.long_scoreboard", 30}}},
          {7, "_Z1other", 0x20, {{c::inst_executed, 999}}}};
}

TEST(CollectedSource, JoinsTheListingByOffsetAndAddsRecordsAtOneOffset) {
  const auto l = listing();
  const KernelSource s = assemble_source("_Z1kPf", records(), &l, listing_lookup());
  EXPECT_EQ(s.origin, "nvdisasm");
  ASSERT_EQ(s.instructions.size(), 3u);
  EXPECT_TRUE(s.instructions[0].counters.empty());
  EXPECT_EQ(s.instructions[1].sass, "LDG.E R2, desc[UR4][R2.64]");
  EXPECT_EQ(s.instructions[1].counters.at(c::inst_executed), 100);
  // The store's two records (SASS metrics, stall samples) add up; the other function's do not.
  EXPECT_EQ(s.instructions[2].counters.at(c::inst_executed), 100);
  EXPECT_EQ(s.instructions[2].counters.at(c::global_sectors), 3200);
  EXPECT_EQ(s.instructions[2].counters.at(c::samples), 40);
  EXPECT_EQ(s.instructions[2].where->line, 7);
}

TEST(CollectedSource, WithoutAListingTheRecordsNameTheInstructionsAndTheLookupTheirLines) {
  const KernelSource s = assemble_source("_Z1kPf", records(), nullptr, listing_lookup());
  EXPECT_EQ(s.origin, "cupti");
  ASSERT_EQ(s.instructions.size(), 2u);  // the offsets with records, in order
  EXPECT_EQ(s.instructions[0].offset, 0x10u);
  EXPECT_TRUE(s.instructions[0].sass.empty());
  EXPECT_EQ(s.instructions[0].where->line, 6);
  EXPECT_EQ(s.instructions[1].where->line, 7);
  EXPECT_EQ(s.instructions[1].counters.at(c::samples), 40);
}

TEST(CollectedSource, ARecordBeyondTheListingIsKeptWithItsLookedUpLine) {
  auto r = records();
  r.push_back({7, "_Z1kPf", 0x30, {{c::inst_executed, 5}}});
  const auto l = listing();
  const KernelSource s =
      assemble_source("_Z1kPf", r, &l, [](std::uint64_t, const std::string&, std::uint64_t) {
        return std::optional<SourceLine>(SourceLine{"k.cu", 9});
      });
  ASSERT_EQ(s.instructions.size(), 4u);
  EXPECT_EQ(s.instructions[3].offset, 0x30u);
  EXPECT_EQ(s.instructions[3].where->line, 9);
}

TEST(CollectedSource, LineTablesThatAgreeHaveNoDisagreements) {
  EXPECT_TRUE(line_disagreements(listing(), listing_lookup(), 7).empty());
}

TEST(CollectedSource, LineTablesThatDisagreeNameTheOffsets) {
  const auto d = line_disagreements(listing(), shifted_lookup(), 7, 2);
  ASSERT_EQ(d.size(), 2u);  // three differ; the limit holds
  EXPECT_EQ(d[0], "0x0000: k.cu:5 vs k.cu:6");
}

TEST(CollectedSource, ALineWithFewSamplesIsNotRankedAndSaysSo) {
  KernelSource s = listing();
  s.instructions[1].counters = {{c::samples, kMinLineSamples - 1}};
  s.instructions[2].counters = {{c::samples, 300}};
  const LineView view = lines_of(s);
  const auto hot = hottest(view, 3);
  ASSERT_EQ(hot.size(), 1u);  // line 6 holds 6% of the samples, but only 19 of them
  EXPECT_EQ(hot[0]->where.line, 7);
  const LineFigures few = figures_of(view.rows[1].counters, view);
  EXPECT_TRUE(few.few_samples);
  EXPECT_EQ(few.samples, kMinLineSamples - 1);
  EXPECT_FALSE(figures_of(view.rows[2].counters, view).few_samples);
}

TEST(CollectedSource, SamplingAndNotesSurviveTheReport) {
  KernelSource s = listing();
  s.sampling = StallSampling{1024, 5000, 3};
  s.notes = {"per-instruction counters: not collected: shared wavefronts"};
  const KernelSource back = read_source(Reader(source_json(s), "source"));
  ASSERT_TRUE(back.sampling);
  EXPECT_EQ(back.sampling->period_cycles, 1024u);
  EXPECT_EQ(back.sampling->samples, 5000u);
  EXPECT_EQ(back.sampling->dropped, 3u);
  EXPECT_EQ(back.notes, s.notes);
}

// Recorded on an H100 with an earlier build whose SASS configuration failed after the first
// variant: the aos variant's per-instruction counters, no stall samples (tests/fixtures/README.md).
TEST(CollectedSource, TheRecordedAosKernelsMarkedLoadMovesSixteenSectorsPerRequest) {
  const Report r = load_report(
      (test::kSourceRoot / "tests/fixtures/source/aos-soa.h100-sass-only.json").string());
  const Kernel& aos = r.variants.at(0).kernels.at(0);
  ASSERT_TRUE(aos.source);
  EXPECT_EQ(aos.source->origin, "cupti");
  const LineView view = lines_of(*aos.source);
  EXPECT_EQ(view.weight, c::inst_executed);
  const int marked = test::marked_lines(test::kSourceRoot / "labs/aos_soa.cu").at(0);
  int global_lines = 0;
  for (const auto& row : view.rows) {
    const auto f = figures_of(row.counters, view);
    if (!f.sectors_per_request) continue;
    ++global_lines;
    if (row.where.line == marked)
      EXPECT_DOUBLE_EQ(*f.sectors_per_request, 16.0) << "one 4-byte field of a 16-byte particle";
    else
      EXPECT_DOUBLE_EQ(*f.sectors_per_request, 4.0) << "line " << row.where.line;
    EXPECT_DOUBLE_EQ(*f.threads_per_instruction, 32.0);
  }
  EXPECT_EQ(global_lines, 2);  // the marked load and the store
}

Report recorded(const std::string& name) {
  return load_report((test::kSourceRoot / "tests/fixtures/source" / name).string());
}

// The naive transpose's line 45 loads a row (coalesced, 4 sectors a request) and stores it down a
// column (32): the line shows its worst instruction's 32, not the mean 18, and it is where most
// of the stall samples are.
TEST(CollectedSource, TheRecordedNaiveTransposesHotLineIsItsStridedStore) {
  const Report r = recorded("transpose.h100.json");
  const Kernel& naive = r.variants.at(0).kernels.at(0);
  ASSERT_TRUE(naive.source && naive.source->sampling);
  const LineView view = lines_of(*naive.source);
  EXPECT_EQ(view.weight, c::samples);
  const auto hot = hottest(view, 3);
  ASSERT_FALSE(hot.empty());
  EXPECT_EQ(hot[0]->where.line, test::naive_store_line());
  EXPECT_GT(*figures_of(*hot[0], view).share, 0.5);
  EXPECT_DOUBLE_EQ(*figures_of(*hot[0], view).sectors_per_request, 32.0);
  EXPECT_DOUBLE_EQ(*figures_of(hot[0]->counters, view).sectors_per_request, 18.0)
      << "the line's summed counters: the mean of its load and its store";
  // The padded tile's every access is coalesced.
  const Kernel& padded = r.variants.at(2).kernels.at(0);
  const LineView padded_view = lines_of(*padded.source);
  for (const auto& row : padded_view.rows)
    if (const auto f = figures_of(row, padded_view); f.sectors_per_request)
      EXPECT_LE(*f.sectors_per_request, 4.0) << "line " << row.where.line;
}

// Stall samples land where a load's value is used, not on the load: the strided gather's most
// sampled line is the loop that stores what it loaded, and the marked load is the one line whose
// requests move 32 sectors.
TEST(CollectedSource, TheRecordedStridedGathersMarkedLoadMovesThirtyTwoSectors) {
  const Report r = recorded("coalescing.h100.json");
  const Kernel& strided = r.variants.at(0).kernels.at(0);
  ASSERT_TRUE(strided.source);
  const LineView view = lines_of(*strided.source);
  const int load = test::marked_lines(test::kSourceRoot / "labs/coalescing.cu").at(0);
  bool found = false;
  for (const auto& row : view.rows) {
    const auto f = figures_of(row, view);
    if (row.where.line == load) {
      found = true;
      EXPECT_DOUBLE_EQ(*f.sectors_per_request, 32.0);
    } else if (f.sectors_per_request) {
      EXPECT_LE(*f.sectors_per_request, 4.0) << "line " << row.where.line;
    }
  }
  EXPECT_TRUE(found);
  const auto hot = hottest(view, 1);
  ASSERT_FALSE(hot.empty());
  EXPECT_NE(hot[0]->where.line, load) << "the samples wait where the value is used";
}

}  // namespace
}  // namespace gpulab::report
