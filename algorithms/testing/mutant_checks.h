// One check for every algorithm with mutants: the "bug" option picks each by
// name, a mutant promises nothing and runs its own subclass of the reference
// node, and a cluster of it runs; "none", the default, builds the reference,
// which promises something.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "algorithms/testing/cluster_harness.h"
#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/mutants.h"
#include "gtest/gtest.h"

namespace algorithms::testing {

// Index of `name` among the "bug" option's choices; -1 when it is none.
inline int64_t BugIndex(const Algorithm& algorithm, const std::string& name) {
  const std::vector<OptionSpec>& specs = algorithm.options();
  const auto spec = std::find_if(specs.begin(), specs.end(), [](const OptionSpec& s) { return s.name == kBugOption; });
  if (spec == specs.end()) return -1;
  const auto choice = std::find(spec->choices.begin(), spec->choices.end(), name);
  return choice == spec->choices.end() ? -1 : static_cast<int64_t>(choice - spec->choices.begin());
}

template <typename Reference>
void ExpectEveryMutantSelectable(const Algorithm& algorithm) {
  const std::vector<Mutant>& mutants = algorithm.mutants();
  ASSERT_FALSE(mutants.empty());
  EXPECT_EQ(algorithm.options().back().name, kBugOption);
  Cluster cluster;
  cluster.node_count = 5;
  cluster.resource = sim::NodeId(5);
  cluster.store = sim::NodeId(6);

  const OptionValues reference = OptionValues::Defaults(algorithm.options());
  EXPECT_EQ(BugIndex(algorithm, "none"), 0);
  EXPECT_EQ(reference.Choice(kBugOption), "none");
  EXPECT_EQ(ChosenMutant(mutants, reference), nullptr);
  EXPECT_FALSE(algorithm.guarantees(reference).empty());
  const std::unique_ptr<sim::Process> reference_node = algorithm.CreateNode(sim::NodeId(0), cluster, reference);
  ASSERT_NE(reference_node, nullptr);
  const sim::Process& reference_process = *reference_node;  // typeid of a plain reference: no side effect
  EXPECT_EQ(typeid(reference_process), typeid(Reference));

  for (size_t i = 0; i < mutants.size(); ++i) {
    const std::string name(mutants[i].name);
    SCOPED_TRACE(name);
    EXPECT_FALSE(mutants[i].description.empty());
    const int64_t bug = BugIndex(algorithm, name);
    ASSERT_EQ(bug, static_cast<int64_t>(i) + 1);
    OptionValues options = OptionValues::Defaults(algorithm.options());
    options.Set(kBugOption, bug);
    EXPECT_EQ(options.Choice(kBugOption), name);
    EXPECT_EQ(ChosenMutant(mutants, options), &mutants[i]);
    EXPECT_TRUE(algorithm.guarantees(options).empty()) << "a mutant promises nothing";
    const std::unique_ptr<sim::Process> node = algorithm.CreateNode(sim::NodeId(0), cluster, options);
    ASSERT_NE(node, nullptr);
    const sim::Process& process = *node;
    EXPECT_NE(typeid(process), typeid(Reference)) << "a mutant runs its own subclass";
    EXPECT_NE(dynamic_cast<const Reference*>(node.get()), nullptr) << "a mutant is a reference node";
    ClusterHarness h(algorithm, 5, 1, sim::LinkConfig::Fixed(sim::TimeNs::Millis(1)),
                     [bug](OptionValues& o) { o.Set(kBugOption, bug); });
    ASSERT_TRUE(h.validation().ok()) << h.validation();
    EXPECT_TRUE(h.sim().RunUntil(sim::TimeNs::Seconds(1)).ok());
  }
}

}  // namespace algorithms::testing
