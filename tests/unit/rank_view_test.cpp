// A job's ranks side by side: two reports of one recorded program (tests/fixtures/outside, the
// CUB program), made ranks 0 and 1, rank 1 slower in its heaviest function and without its
// lightest; the table `gpulab report` prints for them, and the HTML page's section.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "reports/base/errors.hpp"
#include "reports/rank_view.hpp"
#include "reports/render/render_ranks.hpp"
#include "reports/render/trace_events.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/run_cli.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab::report {
namespace {

const std::string kProgram = std::string(GPULAB_FIXTURES_DIR) + "/outside/cub_algorithms.json";

Report rank(std::int64_t number) {
  Report r = load_report(kProgram);
  RankInfo k;
  k.launcher = "torchrun";
  k.rank = number;
  k.local_rank = number;
  k.world_size = 2;
  k.host = "node7";
  r.program->rank = k;
  return r;
}

// Rank 1: its heaviest function takes 1.5 times as long, its last function never runs.
std::vector<Report> job() {
  std::vector<Report> ranks{rank(1), rank(0)};  // in any order
  Report& slow = ranks[0];
  auto& heaviest = *slow.variants.front().totals;
  slow.program->kernel_seconds += 0.5 * heaviest.total_seconds;
  heaviest.total_seconds *= 1.5;
  slow.variants.pop_back();
  return ranks;
}

TEST(RankView, EachFunctionsTimePerRankWithTheSlowestRankAndTheSpread) {
  const auto ranks = job();
  const RankView view = rank_view(ranks);
  EXPECT_EQ(view.launcher, "torchrun");
  ASSERT_EQ(view.ranks.size(), 2u);
  EXPECT_EQ(view.ranks[0].rank, 0) << "by rank";
  EXPECT_EQ(view.ranks[1].rank, 1);

  const Report& fast = ranks[1];
  const Report& slow = ranks[0];
  EXPECT_DOUBLE_EQ(*view.program.seconds[0], fast.program->kernel_seconds);
  EXPECT_DOUBLE_EQ(*view.program.seconds[1], slow.program->kernel_seconds);
  EXPECT_EQ(view.program.slowest_rank, 1);

  const RankRow& heaviest = view.functions.front();
  EXPECT_EQ(heaviest.function, fast.variants.front().description);
  EXPECT_EQ(heaviest.slowest_rank, 1);
  // Two ranks: the median is their mean, so 1.5 against 1 gives 1.5 / 1.25.
  EXPECT_NEAR(heaviest.spread, 1.5 / 1.25, 1e-12);

  const auto last = std::find_if(
      view.functions.begin(), view.functions.end(),
      [&](const auto& row) { return row.function == fast.variants.back().description; });
  ASSERT_NE(last, view.functions.end());
  EXPECT_TRUE(last->seconds[0]);
  EXPECT_FALSE(last->seconds[1]) << "rank 1 never launched it";
  EXPECT_DOUBLE_EQ(last->spread, 1.0);
}

TEST(RankView, AReportOfNoRankOrARankGivenTwiceIsRefused) {
  std::vector<Report> reports{rank(0), load_report(kProgram)};
  EXPECT_THROW(rank_view(reports), UsageError);
  EXPECT_FALSE(are_rank_reports(reports));
  reports = {rank(0), rank(0)};
  try {
    rank_view(reports);
    ADD_FAILURE() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "two reports are rank 0: give each rank's report once");
  }
}

TEST(RankView, ReportPrintsTheRanksTableAndThePageHasItsSection) {
  test::TempFolder folder;
  std::vector<std::string> files;
  for (const auto& r : job()) {
    files.push_back(folder / ("rank" + std::to_string(r.program->rank->rank) + ".json"));
    std::ofstream(files.back()) << to_json(r).dump();
  }
  const auto out = test::run_cli({"report", files[0], files[1]});
  EXPECT_EQ(out.code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("job of 2 ranks, by torchrun's variables: rank 0 on node7, rank 1 on "
                          "node7\nfunction ",
                          0),
            0u)
      << out.out;
  EXPECT_NE(out.out.find("rank 1  slowest  spread\n"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("(every kernel) "), std::string::npos) << out.out;

  const std::string page = folder / "page.html";
  EXPECT_EQ(test::run_cli({"report", files[0], files[1], "-o", page}).code, 0);
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<section class=\"ranks\">\n<h2>Ranks</h2>"), std::string::npos);

  const auto plain = test::run_cli({"report", kProgram});
  EXPECT_EQ(plain.code, 2);
  EXPECT_NE(plain.err.find("report needs -o FILE.html, --trace FILE.json, or both"),
            std::string::npos)
      << plain.err;
}

// A traced rank: one kernel 10 µs into its timeline, whose times begin at `origin_ns`.
Report traced_rank(std::int64_t number, std::uint64_t origin_ns, const std::string& host) {
  Report r = rank(number);
  r.program->rank->host = host;
  r.variants.clear();
  Variant& v = r.variants.emplace_back();
  v.name = "timeline";
  Timeline& t = v.timeline.emplace();
  Activity a;
  a.kind = ActivityKind::kernel;
  a.name = "step";
  a.stream = 7;
  a.start = 10e-6;
  a.end = 30e-6;
  t.activities = {a};
  t.origin_ns = origin_ns;
  return r;
}

// The kernels' events of one rank's process: their start, in µs.
std::vector<double> starts(const nlohmann::json& trace, int pid) {
  std::vector<double> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid) out.push_back(e["ts"].get<double>());
  return out;
}

TEST(RankView, TheRanksTimelinesAreOneTraceOnOneHostsClock) {
  // Rank 1's times begin 500 µs after rank 0's: its kernel is 500 µs later in the trace.
  const std::vector<Report> one_host{traced_rank(1, 2'000'500'000, "node7"),
                                     traced_rank(0, 2'000'000'000, "node7")};
  const auto trace = trace_events_of_ranks(one_host);
  EXPECT_EQ(starts(trace, 1), std::vector<double>{10.0}) << "rank 0 is process 1";
  ASSERT_EQ(starts(trace, 2).size(), 1u);
  EXPECT_NEAR(starts(trace, 2)[0], 510.0, 1e-9);
  EXPECT_EQ(trace["otherData"]["ranks"], 2);
  EXPECT_EQ(trace["otherData"]["clock"], "one host's: the ranks line up");
  bool named = false;
  for (const auto& e : trace["traceEvents"])
    named = named || (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 2 &&
                      e["args"]["name"].get<std::string>().rfind("rank 1 on node7 · GPU ", 0) == 0);
  EXPECT_TRUE(named) << trace.dump(1);

  // On two hosts the clocks are not one: each rank from its own first activity.
  const std::vector<Report> two_hosts{traced_rank(0, 2'000'000'000, "node7"),
                                      traced_rank(1, 2'000'500'000, "node8")};
  const auto apart = trace_events_of_ranks(two_hosts);
  EXPECT_EQ(starts(apart, 2), std::vector<double>{10.0});
  EXPECT_NE(apart["otherData"]["clock"].get<std::string>().find("several hosts"),
            std::string::npos);

  // From the command line: both reports, one trace file.
  test::TempFolder folder;
  std::vector<std::string> files;
  for (const auto& r : one_host) {
    files.push_back(folder / ("rank" + std::to_string(r.program->rank->rank) + ".json"));
    std::ofstream(files.back()) << to_json(r).dump();
  }
  const std::string out = folder / "trace.json";
  EXPECT_EQ(test::run_cli({"report", files[0], files[1], "--trace", out}).code, 0);
  std::ifstream in(out);
  const auto written = nlohmann::json::parse(in);
  EXPECT_NEAR(starts(written, 2).at(0), 510.0, 1e-9);

  std::vector<Report> untraced{rank(0), rank(1)};
  EXPECT_THROW(trace_events_of_ranks(untraced), UsageError);
}

// Two runs of the job: the first as job() makes it, the second with rank 1's heaviest function
// back to rank 0's time. Compared rank by rank, reports in any order within each run.
std::vector<Report> two_runs() {
  std::vector<Report> reports = job();  // rank 1, rank 0
  reports.push_back(rank(0));
  reports.push_back(rank(1));
  return reports;
}

TEST(RankView, TwoRunsOfAJobAreComparedRankByRank) {
  const auto reports = two_runs();
  ASSERT_TRUE(are_two_rank_sets(reports));
  const RankComparison c = compare_rank_sets(reports);
  ASSERT_EQ(c.before.ranks.size(), 2u);
  EXPECT_EQ(c.before.functions.front().slowest_rank, 1);
  EXPECT_NEAR(c.before.functions.front().spread, 1.5 / 1.25, 1e-12);
  EXPECT_NEAR(c.after.functions.front().spread, 1.0, 1e-12);

  const std::string text = render_rank_comparison(c, Style{});
  EXPECT_EQ(text.rfind("job of 2 ranks, by torchrun's variables: rank 0 on node7, rank 1 on "
                       "node7, two runs\nfunction ",
                       0),
            0u)
      << text;
  // Rank 1's heaviest function: 1.5 times as long in the first run, so -33.3% in the second.
  EXPECT_NE(text.find("(-33.3%)"), std::string::npos) << text;
  EXPECT_NE(text.find("(+0.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("- → "), std::string::npos)
      << "the function rank 1 did not run in the first run:\n"
      << text;

  Style markdown;
  markdown.table = TableStyle::markdown;
  EXPECT_NE(render_rank_comparison(c, markdown).find("\n| function "), std::string::npos)
      << render_rank_comparison(c, markdown);

  const auto json = rank_comparison_json(c);
  EXPECT_EQ(json["ranks"].size(), 2u);
  const auto& heaviest = json["functions"][1];
  EXPECT_EQ(heaviest["function"], c.after.functions.front().function);
  EXPECT_NEAR(
      heaviest["first_seconds"][1].get<double>() / heaviest["second_seconds"][1].get<double>(), 1.5,
      1e-12);
}

TEST(RankView, RunsThatDoNotPairRankByRankAreRefused) {
  // One run of four ranks is not two runs: compare takes it against its first report.
  std::vector<Report> four{rank(0), rank(1), rank(2), rank(3)};
  EXPECT_FALSE(are_two_rank_sets(four));
  // Two runs, but interleaved: each half holds one rank twice.
  std::vector<Report> interleaved{rank(0), rank(0), rank(1), rank(1)};
  EXPECT_TRUE(are_two_rank_sets(interleaved));
  EXPECT_THROW(compare_rank_sets(interleaved), UsageError);

  test::TempFolder folder;
  std::vector<std::string> files;
  for (const auto& r : two_runs()) {
    files.push_back(folder / ("run" + std::to_string(files.size()) + ".json"));
    std::ofstream(files.back()) << to_json(r).dump();
  }
  const auto out = test::run_cli({"compare", files[0], files[1], files[2], files[3]});
  EXPECT_EQ(out.code, 0) << out.err;
  EXPECT_NE(out.out.find(", two runs\n"), std::string::npos) << out.out;
  const auto html = test::run_cli(
      {"compare", files[0], files[1], files[2], files[3], "--html", folder / "c.html"});
  EXPECT_EQ(html.code, 2);
  EXPECT_NE(html.err.find("--html: two runs of a job's ranks are compared by each rank's GPU time"),
            std::string::npos)
      << html.err;
  // Rank 1 of both runs, then rank 0 of both: each half holds one rank twice.
  const auto swapped = test::run_cli({"compare", files[0], files[3], files[1], files[2]});
  EXPECT_EQ(swapped.code, 2) << swapped.out;
  EXPECT_NE(swapped.err.find("the first run's rank reports, then the second's"), std::string::npos)
      << swapped.err;
}

}  // namespace
}  // namespace gpulab::report
