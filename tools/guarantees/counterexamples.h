// The "-" cells of the guarantee tables `electsim list` prints, and the
// counterexample file that backs each one: results/counterexamples/
// ALGORITHM[-VARIANT]-INVARIANT-KIND.repro.json, a run that breaks
// INVARIANT, the one checker it runs, under faults of kind KIND and of kinds
// the table keeps INVARIANT under (none at all for "none"). A "yes" means
// kept under any mix of the kinds marked yes, so a "-" says KIND cannot join
// them: mostly KIND alone breaks it, but sometimes only with another (a
// wall-clock lease deadline stepped back outlasts its store only once
// renewals stop getting through). find-counterexamples writes them; a test
// replays each and checks that every cell has one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/guarantees.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/export/guarantee_table.h"

namespace electsim {

struct TableCell {
  const algorithms::Algorithm* algorithm = nullptr;
  GuaranteeVariant variant;
  std::string invariant;
  std::optional<algorithms::FaultKind> kind;  // nullopt: the "none" column

  // "none" or the kind's name.
  std::string column() const;
  // The cell's kind: {kind}, or none.
  algorithms::FaultKinds kinds() const;
  // Whether a run with faults of `in_play` backs the cell: its kind, and
  // otherwise only kinds the table keeps the invariant under.
  bool Backs(algorithms::FaultKinds in_play) const;
  // The kinds such a run may draw from.
  algorithms::FaultKinds allowed() const;
  // "raft-pre_vote.check_quorum-disruption-latency", "bully-stale_token-crash".
  std::string stem() const;
};

// Every cell left "-" in the tables `electsim list` prints: the defaults',
// and each variant's that differs from them and promises something.
std::vector<TableCell> UndeclaredCells();

// The cell a counterexample file's stem names, read against `repro`: the
// algorithm and the variant must match its scenario's boolean and choice
// options. A message saying what does not match otherwise.
absl::StatusOr<TableCell> CellOfCounterexample(const std::string& stem, const Repro& repro);

// Whether `repro` backs `cell` (TableCell::Backs) with the options it runs
// with, and runs the cell's checker alone. (That it breaks it is for a run
// to show.)
absl::Status CheckCounterexampleShape(const TableCell& cell, const Repro& repro);

}  // namespace electsim
