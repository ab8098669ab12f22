// Output names with templates (%p, %h, %q{ENV}, %%) and the rank of a job, from each launcher's
// variables: what `gpulab profile --json` writes for every rank of a torchrun, mpirun or srun
// job, and the collisions it refuses before the program runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>

#include "app/job_rank.hpp"
#include "app/output_names.hpp"
#include "app/profile_plan.hpp"
#include "reports/base/errors.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/shell_command.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab::app {
namespace {

using Variables = std::map<std::string, std::string>;

NameSources sources(const Variables& variables, long pid = 4242, std::string host = "node7") {
  NameSources s;
  s.variable = [variables](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
  s.pid = pid;
  s.host = std::move(host);
  return s;
}

std::string refusal(const std::string& text, const NameSources& s) {
  try {
    expand_output_name("--json", text, s);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(expanded)";
}

TEST(OutputNames, EachTemplateIsFilledIn) {
  const auto s = sources({{"RANK", "3"}, {"SLURM_JOB_ID", "981"}});
  EXPECT_EQ(expand_output_name("--json", "step.%q{RANK}.json", s), "step.3.json");
  EXPECT_EQ(expand_output_name("--json", "%h-%p.json", s), "node7-4242.json");
  EXPECT_EQ(expand_output_name("--json", "job%q{SLURM_JOB_ID}/r%q{RANK}_100%%.json", s),
            "job981/r3_100%.json");
  EXPECT_EQ(expand_output_name("--json", "plain.json", s), "plain.json");
  EXPECT_EQ(expand_output_name("--json", "%%p", s), "%p") << "%% is a '%', not a template";
}

TEST(OutputNames, AnUnsetVariableOrAnUnknownTemplateIsRefusedByName) {
  const auto s = sources({{"RANK", "3"}, {"EMPTY", ""}});
  EXPECT_EQ(refusal("r%q{LOCAL_RANK}.json", s),
            "--json 'r%q{LOCAL_RANK}.json': %q{LOCAL_RANK}: LOCAL_RANK is not set");
  EXPECT_EQ(refusal("r%q{EMPTY}.json", s), "(expanded)") << "set, though empty";
  EXPECT_EQ(refusal("r%x.json", s),
            "--json 'r%x.json': '%x' at character 2 is not a template: %p, %h, %q{ENV}, %%");
  EXPECT_EQ(refusal("r%", s), "--json 'r%': a '%' ends it: write %% for a '%', or %p, %h, %q{ENV}");
  EXPECT_EQ(refusal("r%qRANK.json", s),
            "--json 'r%qRANK.json': %q at character 2 needs a variable in braces: %q{RANK}");
  EXPECT_EQ(refusal("r%q{RANK.json", s),
            "--json 'r%q{RANK.json': %q at character 2 needs a variable in braces: %q{RANK}");
  EXPECT_EQ(refusal("r%q{}.json", s), "--json 'r%q{}.json': %q{} names no variable");
  EXPECT_EQ(refusal("%h.json", sources({}, 1, "")),
            "--json '%h.json': %h: this host's name is unknown");
}

TEST(OutputNames, ANameIsItsRanksOwnWhenAGlobalRankOrTheHostWithALocalOneIsInIt) {
  for (const char* own :
       {"r%p.json", "r%q{RANK}.json", "r%q{SLURM_PROCID}.json", "r%q{OMPI_COMM_WORLD_RANK}.json",
        "r%q{PMI_RANK}.json", "%h/r%q{LOCAL_RANK}.json", "%h-%q{SLURM_LOCALID}.json"})
    EXPECT_TRUE(names_one_file_per_rank(own)) << own;
  for (const char* shared :
       {"r.json", "r%q{LOCAL_RANK}.json", "%h.json", "r%%p.json", "r%q{WORLD_SIZE}.json", "-"})
    EXPECT_FALSE(names_one_file_per_rank(shared)) << shared;
}

TEST(JobRank, EachLaunchersVariablesTellTheRank) {
  struct Case {
    const char* launcher;
    Variables variables;
  };
  const Case cases[] = {
      {"torchrun", {{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}}},
      {"Open MPI",
       {{"OMPI_COMM_WORLD_RANK", "5"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
        {"OMPI_COMM_WORLD_SIZE", "8"}}},
      {"MPICH", {{"PMI_RANK", "5"}, {"MPI_LOCALRANKID", "1"}, {"PMI_SIZE", "8"}}},
      {"Slurm", {{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "8"}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.launcher);
    const auto rank = detect_rank(sources(c.variables).variable, "node7");
    ASSERT_TRUE(rank);
    EXPECT_EQ(rank->launcher, c.launcher);
    EXPECT_EQ(rank->rank, 5);
    EXPECT_EQ(rank->local_rank, 1);
    EXPECT_EQ(rank->world_size, 8);
    EXPECT_EQ(rank->host, "node7");
  }
}

TEST(JobRank, TheInnermostLauncherWinsAndNonNumbersAreNotRanks) {
  // torchrun started by srun: both sets; torchrun's are the ranks of the processes it starts.
  const auto both = detect_rank(
      sources({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"RANK", "3"}, {"WORLD_SIZE", "4"}})
          .variable,
      "h");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->launcher, "torchrun");
  EXPECT_EQ(both->rank, 3);
  EXPECT_FALSE(both->local_rank) << "LOCAL_RANK is not set";

  const auto odd =
      detect_rank(sources({{"RANK", "three"}, {"PMI_RANK", "2"}, {"PMI_SIZE", "x"}}).variable, "h");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->launcher, "MPICH") << "RANK=three is no rank";
  EXPECT_FALSE(odd->world_size);
  EXPECT_FALSE(detect_rank(sources({{"RANK", "-1"}}).variable, "h"));
  EXPECT_FALSE(detect_rank(sources({}).variable, "h"));
}

TEST(JobRank, OneFileForEveryRankIsRefusedBeforeTheProgramRuns) {
  ProfileOptions o;
  o.command = {"true"};
  o.json_path = "report.json";
  const auto job = sources({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  try {
    plan_profile(o, job);
    ADD_FAILURE() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--json 'report.json': each of the job's 2 ranks (by torchrun's variables) would "
                 "write this one file: name one per rank with %q{RANK} or %p");
  }
  o.json_path = "-";
  EXPECT_NO_THROW(plan_profile(o, job)) << "standard output is each rank's own";
  o.json_path = "report.json";
  EXPECT_NO_THROW(plan_profile(o, sources({{"RANK", "0"}, {"WORLD_SIZE", "1"}})));
  EXPECT_NO_THROW(plan_profile(o, sources({})));

  // And from the command line, before the program starts.
  test::TempFolder folder;
  const std::string mark = folder / "ran";
  const auto out = test::sh("cd " + folder.path + " && SLURM_PROCID=0 SLURM_NTASKS=4 " +
                            GPULAB_BINARY + " profile --json r.json -- touch " + mark + " 2>&1");
  EXPECT_EQ(out.code, 2) << out.text;
  EXPECT_NE(out.text.find("each of the job's 4 ranks (by Slurm's variables)"), std::string::npos)
      << out.text;
  EXPECT_NE(::access(mark.c_str(), F_OK), 0) << "the program ran";
}

TEST(JobRank, EachRanksReportIsNamedByItsRankAndSaysWhichRankItIs) {
  test::TempFolder folder;
  for (const char* rank : {"0", "1"}) {
    const auto out = test::sh("cd " + folder.path + " && RANK=" + rank + " LOCAL_RANK=" + rank +
                              " WORLD_SIZE=2 " + GPULAB_BINARY +
                              " profile --json 'step.%q{RANK}.json' -- true 2>&1");
    EXPECT_EQ(out.code, 0) << out.text;
    EXPECT_NE(out.text.find(std::string("rank ") + rank + " of 2 (local rank " + rank + ") on "),
              std::string::npos)
        << out.text;
  }
  for (int rank : {0, 1}) {
    const auto r = report::load_report(folder / ("step." + std::to_string(rank) + ".json"));
    ASSERT_TRUE(r.program && r.program->rank);
    EXPECT_EQ(r.program->rank->launcher, "torchrun");
    EXPECT_EQ(r.program->rank->rank, rank);
    EXPECT_EQ(r.program->rank->local_rank, rank);
    EXPECT_EQ(r.program->rank->world_size, 2);
    EXPECT_FALSE(r.program->rank->host.empty());
  }
}

}  // namespace
}  // namespace gpulab::app
