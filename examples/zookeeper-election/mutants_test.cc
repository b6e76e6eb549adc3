// Every mutant of the recipe is picked by its name through the "bug" option
// and builds a node of its own class; "none" builds the reference. A mutant
// promises nothing, the reference its table.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <typeinfo>

#include "electsim/electsim.h"
#include "zookeeper_election.h"
#include "zookeeper_mutants.h"
#include "zookeeper_node.h"

namespace {

int failures = 0;

void Expect(bool ok, const std::string& what) {
  if (ok) return;
  std::cerr << "mutants_test: " << what << "\n";
  ++failures;
}

// The "bug" option's value that names `name`, -1 when none does.
int64_t BugChoice(const algorithms::Algorithm& algorithm, const std::string& name) {
  for (const algorithms::OptionSpec& spec : algorithm.options()) {
    if (spec.name != algorithms::kBugOption) continue;
    const auto it = std::find(spec.choices.begin(), spec.choices.end(), name);
    return it == spec.choices.end() ? -1 : static_cast<int64_t>(it - spec.choices.begin());
  }
  return -1;
}

}  // namespace

int main() {
  const algorithms::Algorithm& zk = zookeeper::ZooKeeperElection();
  const algorithms::Cluster cluster{.node_count = 3, .resource = sim::NodeId(3), .store = sim::NodeId(4)};

  algorithms::OptionValues defaults = algorithms::OptionValues::Defaults(zk.options());
  Expect(BugChoice(zk, "none") == 0 && defaults.Choice(algorithms::kBugOption) == "none",
         "\"none\" is the bug option's default");
  Expect(algorithms::ChosenMutant(zk.mutants(), defaults) == nullptr, "\"none\" picks no mutant");
  Expect(!zk.guarantees(defaults).empty(), "the reference keeps its guarantees");
  const std::unique_ptr<sim::Process> reference = zk.CreateNode(sim::NodeId(0), cluster, defaults);
  Expect(reference != nullptr && typeid(*reference) == typeid(zookeeper::Node), "\"none\" builds the reference");

  Expect(&zk.mutants() == &zookeeper::Mutants() && !zk.mutants().empty(), "the algorithm lists the mutants");
  for (const algorithms::Mutant& mutant : zk.mutants()) {
    const std::string name(mutant.name);
    algorithms::OptionValues options = algorithms::OptionValues::Defaults(zk.options());
    const int64_t choice = BugChoice(zk, name);
    Expect(choice > 0, name + ": a choice of the bug option");
    if (choice <= 0) continue;
    options.Set(algorithms::kBugOption, choice);
    Expect(algorithms::ChosenMutant(zk.mutants(), options) == &mutant, name + ": picked by its name");
    Expect(zk.guarantees(options).empty(), name + ": promises nothing");
    Expect(!mutant.description.empty(), name + ": has a description");
    const std::unique_ptr<sim::Process> node = zk.CreateNode(sim::NodeId(0), cluster, options);
    Expect(node != nullptr && dynamic_cast<zookeeper::Node*>(node.get()) != nullptr &&
               typeid(*node) != typeid(zookeeper::Node),
           name + ": builds a node of its own class");
  }
  std::cout << "mutants_test: " << zk.mutants().size() << " mutants, " << failures << " failures\n";
  return failures == 0 ? 0 : 1;
}
